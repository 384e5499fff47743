/**
 * A PostgreSQL server of one test file's own, so the test can restart and
 * stop it without touching the shared test server other files are using:
 * initdb into a temporary directory, a Unix socket in it, no TCP. Debian's
 * server binaries (installed by .ci/system-deps.sh); as root, the cluster is
 * run by the `postgres` user, since PostgreSQL refuses to run as root.
 *
 * @module
 */

import { execFile } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The newest installed server's bin directory, or `undefined`. */
function serverBin(): string | undefined {
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return undefined;
  const versions = readdirSync(base)
    .filter((v) => existsSync(join(base, v, 'bin', 'pg_ctl')))
    .sort((a, b) => Number(a) - Number(b));
  const newest = versions.at(-1);
  return newest === undefined ? undefined : join(base, newest, 'bin');
}

/** The `postgres` user's ids, which run the cluster when this process is root. */
async function postgresUser(): Promise<{ uid: number; gid: number }> {
  const id = async (flag: string) => Number((await run('id', [flag, 'postgres'])).stdout.trim());
  return { uid: await id('-u'), gid: await id('-g') };
}

/** A throwaway cluster. */
export class PrivatePostgres {
  readonly dir: string;
  readonly #bin: string;
  readonly #asRoot: boolean;

  private constructor(dir: string, bin: string, asRoot: boolean) {
    this.dir = dir;
    this.#bin = bin;
    this.#asRoot = asRoot;
  }

  /** The URL of the cluster's `postgres` database, with a schema of the caller's. */
  url(schema: string): string {
    return `postgres://postgres@/postgres?host=${this.dir}&schema=${schema}`;
  }

  /** Makes and starts a cluster; `undefined` when no server binaries are installed. */
  static async start(): Promise<PrivatePostgres | undefined> {
    const bin = serverBin();
    if (bin === undefined) return undefined;
    // Under /var/tmp: /tmp may be a small tmpfs, and the `postgres` user must reach the path.
    const dir = mkdtempSync('/var/tmp/ctxfs-pg-private-');
    chmodSync(dir, 0o755);
    const asRoot = process.getuid?.() === 0;
    const owner = asRoot ? await postgresUser() : undefined;
    if (owner) chownSync(dir, owner.uid, owner.gid);
    const pg = new PrivatePostgres(dir, bin, asRoot);
    await pg.#ctl('initdb', ['-D', join(dir, 'data'), '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C.UTF-8', '--no-sync']);
    writeFileSync(
      join(dir, 'data', 'postgresql.conf'),
      `listen_addresses = ''\nunix_socket_directories = '${dir}'\nfsync = off\nsynchronous_commit = off\nfull_page_writes = off\nmax_connections = 60\n`,
      { flag: 'a' },
    );
    if (owner) chownSync(join(dir, 'data', 'postgresql.conf'), owner.uid, owner.gid);
    await pg.startServer();
    return pg;
  }

  /** Runs one of the server's programs, as `postgres` when this process is root. */
  async #ctl(program: string, args: readonly string[]): Promise<void> {
    const path = join(this.#bin, program);
    const [file, argv] = this.#asRoot ? ['runuser', ['-u', 'postgres', '--', path, ...args]] : [path, [...args]];
    await run(file, argv, { cwd: '/', timeout: 120_000 });
  }

  startServer(): Promise<void> {
    return this.#ctl('pg_ctl', ['start', '-w', '-t', '60', '-D', join(this.dir, 'data'), '-l', join(this.dir, 'server.log')]);
  }

  /** `pg_ctl restart -m fast`: every connection is dropped, the server is back when this resolves. */
  restart(): Promise<void> {
    return this.#ctl('pg_ctl', ['restart', '-m', 'fast', '-w', '-t', '60', '-D', join(this.dir, 'data'), '-l', join(this.dir, 'server.log')]);
  }

  /** `pg_ctl stop -m fast`. */
  stop(): Promise<void> {
    return this.#ctl('pg_ctl', ['stop', '-m', 'fast', '-w', '-t', '60', '-D', join(this.dir, 'data')]);
  }

  /** Stops the server (if running) and removes the cluster. */
  async destroy(): Promise<void> {
    await this.stop().catch(() => undefined);
    rmSync(this.dir, { recursive: true, force: true });
  }
}
