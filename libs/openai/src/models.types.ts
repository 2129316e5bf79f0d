export interface Model {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
  /**
   * Conveyor's extra fields: whether any worker serves the model right now (`ready`), one is loading it
   * (`loading`), it loads on its first request (`cold`: an on-demand deployment no worker holds), or
   * nothing serves it until a worker of its pool starts (`no_workers`).
   */
  status: 'ready' | 'loading' | 'cold' | 'no_workers';
  live_workers: number;
  /** Set on an alias: the id of the deployment the name reaches. */
  alias_of?: string;
  /** Set on a LoRA adapter's model, as vLLM lists one: the deployment whose model it adapts. */
  parent?: string;
}

export interface ModelList {
  object: 'list';
  data: Model[];
}
