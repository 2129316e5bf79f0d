// The modules the benches import from a build (dist/, or another --dist), typed as the sources in
// libs/ they are compiled from. Types only: each bench imports from its own build folder.
/**
 * @typedef {{
 *   'libs/config/src/index.js': typeof import('../../libs/config/src/index.js'),
 *   'libs/engine/src/index.js': typeof import('../../libs/engine/src/index.js'),
 *   'libs/gguf/src/index.js': typeof import('../../libs/gguf/src/index.js'),
 *   'libs/queue/src/index.js': typeof import('../../libs/queue/src/index.js'),
 * }} DistModules
 */
export {};
