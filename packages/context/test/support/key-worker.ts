/**
 * Child process of the key-file race test: loads (or creates) the key at
 * argv[2] as soon as argv[3] (an epoch ms) comes, and prints it as JSON.
 */
import { loadOrCreateKey } from '../../src/safety/audit/key-file.ts';

const [keyFile, at] = process.argv.slice(2) as [string, string];
while (Date.now() < Number(at)) {
  // Spin to the common start, so the processes open the key at the same moment.
}
process.stdout.write(JSON.stringify({ key: Buffer.from(loadOrCreateKey(keyFile)).toString('hex') }));
