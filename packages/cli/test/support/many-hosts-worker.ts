/**
 * One "host" of the many-hosts run: its own process, its own PostgreSQL
 * connection pool and its own connection to the shared container over the TLS
 * engine, with several agent sessions editing the shared files at random until
 * the deadline. Each session owns one counter line in every file and checks,
 * before each edit, that its counter still holds what its own successful edits
 * made it: any update lost to another host shows there. Prints what it did as
 * JSON. argv: state URL, container id, engine host, certificate directory,
 * host index, sessions, files, run time in ms.
 */
import { ContainerFilesystem } from '@ctxfs/container';
import { createContext } from '@ctxfs/context';

const [state, container, engineHost, certPath, hostArg, sessionsArg, filesArg, msArg] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string,
  string,
  string,
  string,
];
const host = Number(hostArg);
const files = Array.from({ length: Number(filesArg) }, (_, i) => `shared/f${i}.txt`);
const deadline = Date.now() + Number(msArg);

const fs = await ContainerFilesystem.open({ container, workdir: '/work', engine: { host: engineHost, certPath } });
const ctx = await createContext({ fs, store: state, agent: `tool:host${host}` });

interface Tally {
  applied: number;
  merged: number;
  conflicts: number;
  reads: number;
  /** Reads whose served version the store did not keep (see below). */
  unremembered: number;
  /** Per file: how many of this session's edits landed in it. */
  counts: Record<string, number>;
}

async function session(s: number): Promise<Tally> {
  const me = `h${host}s${s}`;
  const agent = ctx.session({ agent: `llm:${me}` });
  const tally: Tally = { applied: 0, merged: 0, conflicts: 0, reads: 0, unremembered: 0, counts: Object.fromEntries(files.map((f) => [f, 0])) };
  while (Date.now() < deadline) {
    const path = files[Math.floor(Math.random() * files.length)] as string;
    const served = await agent.readFile(path);
    tally.reads++;
    const bytes = await ctx.versions.getBlob(served.version);
    if (bytes === undefined) {
      // The context keeps a served version by reading the file again, and
      // another host changed it in between: nothing to check an edit
      // against (and such an edit, stale, would be refused, not merged).
      tally.unremembered++;
      continue;
    }
    const text = new TextDecoder().decode(bytes);
    const n = Number(new RegExp(`^${me}=(\\d+)$`, 'm').exec(text)?.[1] ?? -1);
    const mine = tally.counts[path] as number;
    if (n !== mine) throw new Error(`${me}: ${path} holds ${me}=${n}, but ${mine} of its edits landed there: an update was lost`);
    // Let the other sessions and hosts in between the read and the edit.
    await new Promise((r) => setTimeout(r, Math.random() * 5));
    const from = `${me}=${n}\n`;
    const to = `${me}=${n + 1}\n`;
    const kind = Math.floor(Math.random() * 3);
    const r =
      kind === 0
        ? await agent.replace(path, from, to)
        : kind === 1
          ? await agent.applyPatch(`--- a/${path}\n+++ b/${path}\n@@ @@\n-${from}+${to}`)
          : await agent.writeFile(path, text.replace(from, to));
    if (r.success) {
      tally.applied++;
      if (r.merged) tally.merged++;
      tally.counts[path] = mine + 1;
    } else if (r.code === 'ECONFLICT') {
      tally.conflicts++;
    } else {
      throw new Error(`${me}: ${r.code}: ${r.message}`);
    }
  }
  return tally;
}

const tallies = await Promise.all(Array.from({ length: Number(sessionsArg) }, (_, s) => session(s)));
process.stdout.write(`${JSON.stringify({ host, sessions: tallies })}\n`);
await ctx.close();
await fs.close();
