// Prints the SHA-256 to put in the deployments file: node dist/libs/config/src/hash-key.cli.js <key>
import { hashKey } from './hash-key.js';

const key = process.argv[2];
if (!key) {
  console.error('usage: npm run hash-key -- <key>');
  process.exit(2);
}
console.log(hashKey(key));
