/**
 * Child process of the key-file race test: loads (or creates) the key at
 * argv[2] as soon as argv[3] (an epoch ms) comes, and prints it as JSON;
 * with argv[4], as that uid and gid (the modules are loaded as root first,
 * from a checkout that user may not be able to read).
 */
import { loadOrCreateKey } from '../../src/safety/audit/key-file.ts';

const [keyFile, at, uid] = process.argv.slice(2) as [string, string, string | undefined];
if (uid !== undefined) {
  process.setgid?.(Number(uid));
  process.setuid?.(Number(uid));
}
while (Date.now() < Number(at)) {
  // Spin to the common start, so the processes open the key at the same moment.
}
process.stdout.write(JSON.stringify({ key: Buffer.from(loadOrCreateKey(keyFile)).toString('hex') }));
