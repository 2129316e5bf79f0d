/**
 * The Lark grammar Codex CLI (0.171) declares for its free-form `apply_patch` tool, byte for byte as its
 * binary carries it (blank lines, the `-> line` alias and the trailing line feed included). With
 * environments on, Codex swaps the `start` line for the one in APPLY_PATCH_ENVIRONMENT_GRAMMAR.
 */
export const APPLY_PATCH_GRAMMAR = [
  'start: begin_patch hunk+ end_patch',
  'begin_patch: "*** Begin Patch" LF',
  'end_patch: "*** End Patch" LF?',
  '',
  'hunk: add_hunk | delete_hunk | update_hunk',
  'add_hunk: "*** Add File: " filename LF add_line+',
  'delete_hunk: "*** Delete File: " filename LF',
  'update_hunk: "*** Update File: " filename LF change_move? change?',
  '',
  'filename: /(.+)/',
  'add_line: "+" /(.*)/ LF -> line',
  '',
  'change_move: "*** Move to: " filename LF',
  'change: (change_context | change_line)+ eof_line?',
  'change_context: ("@@" | "@@ " /(.+)/) LF',
  'change_line: ("+" | "-" | " ") /(.*)/ LF',
  'eof_line: "*** End of File" LF',
  '',
  '%import common.LF',
  '',
].join('\n');

export const APPLY_PATCH_ENVIRONMENT_GRAMMAR = APPLY_PATCH_GRAMMAR.replace(
  'start: begin_patch hunk+ end_patch',
  'start: begin_patch environment_id? hunk+ end_patch\nenvironment_id: "*** Environment ID: " filename LF',
);

/**
 * Whether a text is a patch of that grammar's shape, checked line by line: the begin and end markers,
 * then hunks that each add (`+` lines), delete, or update a file (an optional move, then context,
 * `+`, `-` and ` ` lines, an optional end-of-file marker).
 */
export function isApplyPatch(text: string): boolean {
  const line = String.raw`[^\n]*`;
  const name = String.raw`[^\n]+`;
  const add = String.raw`\*\*\* Add File: ${name}\n(?:\+${line}\n)+`;
  const del = String.raw`\*\*\* Delete File: ${name}\n`;
  const change = String.raw`(?:(?:@@|@@ ${name})\n|[-+ ]${line}\n)+(?:\*\*\* End of File\n)?`;
  const update = String.raw`\*\*\* Update File: ${name}\n(?:\*\*\* Move to: ${name}\n)?(?:${change})?`;
  const env = String.raw`(?:\*\*\* Environment ID: ${name}\n)?`;
  return new RegExp(String.raw`^\*\*\* Begin Patch\n${env}(?:${add}|${del}|${update})+\*\*\* End Patch\n?$`).test(text);
}
