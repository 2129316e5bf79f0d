/**
 * A seeded generator (mulberry32) of numbers in [0, 1): the same sequence for the same seed, so a bench's
 * workload (its words, its order, which lines repeat) is the same from run to run.
 * @param {number} seed
 * @returns {() => number}
 */
export function seededRandom(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

/**
 * `count` words of `vocabulary` picked by a seeded generator (mulberry32), with a full stop now and then:
 * varied text that a byte-level tokenizer cannot compress into a few tokens, the same for the same seed.
 * @param {readonly string[]} vocabulary
 * @param {number} seed
 * @param {number} count
 */
export function seededWords(vocabulary, seed, count) {
  const next = seededRandom(seed);
  /** @type {string[]} */
  const out = [];
  for (let i = 0; i < count; i++)
    out.push(vocabulary[Math.floor(next() * vocabulary.length)] + (next() < 0.1 ? '.' : ''));
  return out.join(' ');
}
