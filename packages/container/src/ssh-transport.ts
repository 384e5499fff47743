/**
 * The Docker engine over SSH, reached as the docker CLI reaches it: log in to
 * the host and run `docker system dial-stdio`, which relays the engine's API
 * over the command's stdin and stdout. Here every HTTP connection of the
 * engine client is one such command on a shared SSH connection (ssh2), so the
 * handshake is paid once and not per API call; the server's host key is
 * checked against known_hosts before anything is sent.
 *
 * @module
 */

import type { ClientRequestArgs } from 'node:http';
import { Agent } from 'node:http';
import { Socket } from 'node:net';
import { Duplex } from 'node:stream';
import ssh2 from 'ssh2';
import { blobType, checkHostKey, fingerprint, type HostKeyCheck, knownHostsName, knownKeyTypes } from './known-hosts.ts';

/**
 * A private key to log in with, and where it came from. The key is held in a
 * private field, so logging a resolved address (util.inspect at any depth,
 * JSON) shows its source and fingerprint, never the key.
 */
export class SshIdentity {
  /** `the privateKey option`, or `the key file <path>`. */
  readonly source: string;
  /** SHA-256 fingerprint of the public key, as `ssh-keygen -l` prints it. */
  readonly fingerprint: string;
  readonly #key: ssh2.ParsedKey;

  constructor(key: ssh2.ParsedKey, source: string) {
    this.#key = key;
    this.source = source;
    this.fingerprint = fingerprint(key.getPublicSSH());
  }

  /** The parsed key, for ssh2. */
  get key(): ssh2.ParsedKey {
    return this.#key;
  }
}

/** Everything an SSH connection to the engine's host needs, resolved from options and environment. */
export interface SshTarget {
  readonly host: string;
  readonly port: number;
  readonly username: string;
  /** Keys tried in order (an explicit key, or the default identity files that exist). */
  readonly identities: readonly SshIdentity[];
  /** An ssh-agent socket (SSH_AUTH_SOCK), tried before the identity files. */
  readonly agent?: string;
  /** known_hosts files the host key is checked against. */
  readonly knownHosts: readonly string[];
  /** How long the TCP connect, handshake and login may take, in ms. */
  readonly readyTimeoutMs: number;
}

/**
 * Why the engine could not be used over SSH, when it is not simply
 * unreachable: the host key is not known (`host-unknown`) or differs from
 * the known one (`host-mismatch`, also a revoked key), the server refused
 * every key offered (`auth-refused`), the host has no docker command
 * (`no-docker`), the host's docker may not use its engine (`engine-denied`),
 * `docker system dial-stdio` failed otherwise (`dial-failed`), or the server
 * does not speak SSH as expected (`protocol`).
 */
export type SshFailure = 'host-unknown' | 'host-mismatch' | 'auth-refused' | 'no-docker' | 'engine-denied' | 'dial-failed' | 'protocol';

/** An SSH-level failure, with a reason (completing "the … engine at ssh://… (over SSH) …") and what to do. */
export class SshEngineError extends Error {
  readonly failure: SshFailure;
  readonly reason: string;
  readonly hint: string;
  constructor(failure: SshFailure, reason: string, hint: string, cause?: unknown) {
    super(reason, cause === undefined ? undefined : { cause });
    this.name = 'SshEngineError';
    this.failure = failure;
    this.reason = reason;
    this.hint = hint;
  }
}

/** The command whose stdin and stdout carry the engine's API, as the docker CLI runs it. */
const DIAL_COMMAND = 'docker system dial-stdio';
/** OpenSSH's sshd allows 10 sessions per connection by default (MaxSessions): stay under it, then open another. */
const CHANNELS_PER_CONNECTION = 8;
/** An SSH connection without channels this long is closed (a keep-alive HTTP connection holds its channel a while first). */
const IDLE_CLOSE_MS = 30_000;
/** Idle keep-alive HTTP connections (dial-stdio commands on the host) are ended after this. */
const FREE_SOCKET_TIMEOUT_MS = 15_000;
const STDERR_KEPT = 4096;

/**
 * An HTTP connection over one `docker system dial-stdio` channel: a Duplex
 * with the socket methods Node's HTTP client and agent call. When the command
 * ends before sending a byte and with a failure status, the stream fails with
 * what the command said on stderr instead of ending quietly, so a request
 * reports "docker: not found" rather than "socket hang up".
 */
class ChannelSocket extends Duplex {
  readonly #channel: ssh2.ClientChannel;
  readonly #failure: (exit: number | undefined, signal: string | undefined, stderr: string) => Error;
  readonly #refs: { ref(): void; unref(): void };
  #received = false;
  #sawEnd = false;
  #exit: number | undefined;
  #signal: string | undefined;
  #stderr = '';
  #timeoutMs = 0;
  #timer: NodeJS.Timeout | undefined;
  #refd = true;

  constructor(
    channel: ssh2.ClientChannel,
    refs: { ref(): void; unref(): void },
    failure: (exit: number | undefined, signal: string | undefined, stderr: string) => Error,
  ) {
    super();
    this.#channel = channel;
    this.#refs = refs;
    this.#failure = failure;
    channel.on('data', (chunk: Buffer) => {
      this.#received = true;
      this.#touch();
      if (!this.push(chunk)) channel.pause();
    });
    channel.stderr.on('data', (chunk: Buffer) => {
      if (this.#stderr.length < STDERR_KEPT) this.#stderr += chunk.toString('utf8').slice(0, STDERR_KEPT - this.#stderr.length);
    });
    channel.on('exit', (code: number | null, signal?: string) => {
      this.#exit = code ?? undefined;
      this.#signal = signal;
    });
    channel.on('end', () => {
      this.#sawEnd = true;
      // Without a byte the end may be a failure; 'close' (after the exit status) decides.
      if (this.#received) this.push(null);
    });
    channel.on('close', () => this.#closed());
  }

  #closed(): void {
    this.#unrefOnce();
    clearTimeout(this.#timer);
    if (!this.#received && this.#exit !== 0) {
      this.destroy(this.#failure(this.#exit, this.#signal, this.#stderr.trim()));
      return;
    }
    if (!this.#sawEnd || !this.#received) this.push(null);
    // Nothing more can be written once the channel is gone; end when the reader has the rest.
    if (this.readableEnded) this.destroy();
    else this.once('end', () => this.destroy());
  }

  #touch(): void {
    if (this.#timeoutMs > 0) this.#arm();
  }

  #arm(): void {
    clearTimeout(this.#timer);
    if (this.#timeoutMs <= 0 || this.destroyed) return;
    this.#timer = setTimeout(() => this.emit('timeout'), this.#timeoutMs);
    this.#timer.unref();
  }

  #unrefOnce(): void {
    if (this.#refd) {
      this.#refd = false;
      this.#refs.unref();
    }
  }

  override _read(): void {
    this.#channel.resume();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (err?: Error | null) => void): void {
    this.#touch();
    this.#channel.write(chunk, (err?: Error | null) => callback(err));
  }

  override _final(callback: (err?: Error | null) => void): void {
    // Half-close: the host's dial-stdio passes the end of input on to the engine.
    this.#channel.end();
    callback();
  }

  override _destroy(err: Error | null, callback: (err?: Error | null) => void): void {
    clearTimeout(this.#timer);
    this.#unrefOnce();
    this.#channel.destroy();
    callback(err);
  }

  // What Node's HTTP client and keep-alive agent call on a socket.
  get timeout(): number {
    return this.#timeoutMs;
  }
  setTimeout(ms: number, callback?: () => void): this {
    this.#timeoutMs = ms;
    // As net.Socket: a zero timeout with a callback takes that listener off (Node's HTTP client relies on it).
    if (callback) {
      if (ms === 0) this.removeListener('timeout', callback);
      else this.once('timeout', callback);
    }
    this.#arm();
    return this;
  }
  setNoDelay(): this {
    return this;
  }
  setKeepAlive(): this {
    return this;
  }
  ref(): this {
    if (!this.#refd && !this.destroyed) {
      this.#refd = true;
      this.#refs.ref();
    }
    return this;
  }
  unref(): this {
    this.#unrefOnce();
    return this;
  }
}

/** One SSH connection and the channels open on it. */
class SshConnection {
  readonly client = new ssh2.Client();
  readonly socket = new Socket();
  readonly ready: Promise<void>;
  open = 0;
  /** Channels holding the process alive (not idle in the keep-alive pool). */
  refs = 0;
  /** The server refused another channel here. */
  full = false;
  dead = false;
  #idle: NodeJS.Timeout | undefined;

  constructor(target: SshTarget, address: string, onGone: (c: SshConnection) => void) {
    let check: HostKeyCheck | undefined;
    const skipped: string[] = [];
    let presented: Buffer | undefined;
    const name = knownHostsName(target.host, target.port);
    const known = knownKeyTypes(target.knownHosts, name);
    this.ready = new Promise<void>((resolve, reject) => {
      let settled = false;
      const fail = (err: Error) => {
        if (!settled) {
          settled = true;
          reject(err);
        }
        this.close();
      };
      this.client.once('ready', () => {
        settled = true;
        resolve();
      });
      this.client.on('error', (err: Error & { level?: string; code?: string }) => {
        if (settled) return;
        // ssh2 reports an agent it cannot reach, or a key that cannot sign, and goes on with the next method.
        if (err.level === 'agent' || (err.level === 'client-authentication' && !/all configured authentication methods failed/i.test(err.message))) {
          skipped.push(err.level === 'agent' ? `the agent failed: ${err.message}` : err.message);
          return;
        }
        const refused = check;
        if (refused !== undefined && refused.verdict !== 'known' && presented !== undefined) {
          fail(hostKeyError(refused, presented, target, name));
        } else if (err.level === 'client-authentication') {
          fail(authError(target, address, skipped, err));
        } else if (err.level === 'client-timeout') {
          fail(
            Object.assign(new Error(`no SSH handshake with ${target.host}:${target.port} within ${target.readyTimeoutMs} ms`, { cause: err }), {
              code: 'ETIMEDOUT',
            }),
          );
        } else if (typeof err.code === 'string') {
          fail(err); // ECONNREFUSED, EHOSTUNREACH, ENOTFOUND...: the engine does not answer
        } else {
          fail(
            new SshEngineError(
              'protocol',
              `failed during the SSH handshake: ${err.message}`,
              'check that the address names an SSH server (host and port) and that it accepts current key exchange algorithms',
              err,
            ),
          );
        }
      });
      this.client.on('close', () => {
        fail(Object.assign(new Error(`the SSH connection to ${target.host}:${target.port} closed`), { code: 'ECONNRESET' }));
        this.dead = true;
        onGone(this);
      });
    });
    // Rejections are delivered to whoever waits on a channel; this one only keeps an early failure from being "unhandled".
    this.ready.catch(() => {});
    const auth: ssh2.AnyAuthMethod[] = [];
    if (target.agent !== undefined) auth.push({ type: 'agent', username: target.username, agent: target.agent });
    for (const id of target.identities) auth.push({ type: 'publickey', username: target.username, key: id.key });
    this.socket.connect({ host: target.host.replace(/^\[(.*)\]$/, '$1'), port: target.port });
    // Requests are small and answered one at a time: without this, Nagle and delayed ACKs add ~40 ms to each.
    this.socket.setNoDelay(true);
    this.client.connect({
      sock: this.socket,
      username: target.username,
      authHandler: auth,
      readyTimeout: target.readyTimeoutMs,
      hostVerifier: (key: Buffer) => {
        presented = key;
        check = checkHostKey(target.knownHosts, name, key);
        return check.verdict === 'known';
      },
      // Ask for a key type known_hosts holds for the host first, so a server with several keys shows a known one.
      ...(known.length === 0 ? {} : { algorithms: { serverHostKey: { remove: hostKeyAlgorithms(known), prepend: hostKeyAlgorithms(known), append: [] } } }),
    });
  }

  /** Marks a channel open (and holding the process alive) or closed; an idle connection closes after a while. */
  opened(): void {
    this.open += 1;
    clearTimeout(this.#idle);
  }

  closedChannel(): void {
    this.open -= 1;
    if (this.open === 0 && !this.dead) {
      this.#idle = setTimeout(() => this.close(), IDLE_CLOSE_MS);
      this.#idle.unref();
    }
  }

  ref(): void {
    this.refs += 1;
    if (this.refs === 1) this.socket.ref();
  }

  unref(): void {
    this.refs -= 1;
    if (this.refs === 0) this.socket.unref();
  }

  close(): void {
    clearTimeout(this.#idle);
    this.dead = true;
    this.client.end();
    this.socket.destroy();
  }
}

/** Host key algorithms that present keys of these types (an RSA key signs with SHA-2 too). */
function hostKeyAlgorithms(types: readonly string[]): ssh2.ServerHostKeyAlgorithm[] {
  const out: ssh2.ServerHostKeyAlgorithm[] = [];
  for (const t of types) {
    if (t === 'ssh-rsa') out.push('rsa-sha2-512', 'rsa-sha2-256', 'ssh-rsa');
    else if (t === 'ssh-ed25519' || t === 'ecdsa-sha2-nistp256' || t === 'ecdsa-sha2-nistp384' || t === 'ecdsa-sha2-nistp521') out.push(t);
  }
  return out;
}

function hostKeyError(check: Exclude<HostKeyCheck, { verdict: 'known' }>, key: Buffer, target: SshTarget, name: string): SshEngineError {
  const shown = `${blobType(key)} ${fingerprint(key)}`;
  const files = target.knownHosts.join(', ');
  const scan = `ssh-keyscan${target.port === 22 ? '' : ` -p ${target.port}`} ${target.host.replace(/^\[(.*)\]$/, '$1')}`;
  if (check.verdict === 'unknown') {
    return new SshEngineError(
      'host-unknown',
      `was not trusted: its SSH host key (${shown}) is not in known_hosts (${files || 'none given'})`,
      `check that fingerprint with the host's administrator, then add the key for '${name}' to known_hosts (e.g. \`${scan} >> ~/.ssh/known_hosts\`, or one interactive \`ssh\` login), or pass ssh.knownHosts naming a file that has it`,
    );
  }
  if (check.verdict === 'revoked') {
    return new SshEngineError(
      'host-mismatch',
      `was refused: its SSH host key (${shown}) is marked @revoked in ${check.where}`,
      'do not connect; ask the host administrator for the current key',
    );
  }
  return new SshEngineError(
    'host-mismatch',
    `was refused: its SSH host key (${shown}) differs from the one known_hosts holds for '${name}' (${check.where}, ${check.knownTypes.join(', ')}); someone may be intercepting the connection`,
    `if the host's key was changed on purpose, remove the old line (\`ssh-keygen -R '${name}'\`) and add the new key after checking its fingerprint; otherwise do not connect`,
  );
}

function authError(target: SshTarget, address: string, skipped: readonly string[], err: Error): SshEngineError {
  const tried = [
    ...(target.agent === undefined ? [] : [`the ssh-agent at ${target.agent}`]),
    ...target.identities.map((id) => `${id.source} (${id.fingerprint})`),
  ];
  return new SshEngineError(
    'auth-refused',
    `refused the SSH login of user '${target.username}' (tried ${tried.length === 0 ? 'no key: none was given, SSH_AUTH_SOCK is unset and ~/.ssh has no id_rsa, id_ecdsa or id_ed25519' : tried.join(', ')}${skipped.length === 0 ? '' : `; ${skipped.join('; ')}`})`,
    `add the public key to ~${target.username}/.ssh/authorized_keys on the host, or pass ssh.privateKey (or load the key into ssh-agent) for a key it accepts; ${address} names the user before '@'`,
    err,
  );
}

function dialError(address: string, exit: number | undefined, signal: string | undefined, stderr: string): Error {
  if (exit === undefined && signal === undefined && stderr === '') {
    // No status at all: the SSH connection went away under the channel, not the command.
    return Object.assign(new Error('the SSH channel closed before the engine answered'), { code: 'ECONNRESET' });
  }
  const said = stderr === '' ? 'nothing on stderr' : `'${stderr.split('\n').slice(-3).join(' ').slice(0, 400)}'`;
  const status = exit === undefined ? `signal ${signal ?? 'unknown'}` : `status ${exit}`;
  if (exit === 127 || /docker: (command )?not found|no such file or directory.*docker/i.test(stderr)) {
    return new SshEngineError(
      'no-docker',
      `has no docker command: \`${DIAL_COMMAND}\` on the host ended with ${status} (${said})`,
      `install the docker CLI on the host, on the PATH of a non-interactive SSH session (\`ssh host docker version\` must work), or point ${address} at a host that has it`,
    );
  }
  if (/permission denied/i.test(stderr)) {
    return new SshEngineError(
      'engine-denied',
      `let the SSH login in, but its docker may not use the engine (${said})`,
      "add the SSH user to the host's docker group (or use an account that can reach the engine's socket)",
    );
  }
  if (/unknown command|is not a docker command|unknown flag/i.test(stderr)) {
    return new SshEngineError('no-docker', `has a docker CLI without \`system dial-stdio\` (${said})`, 'install docker CLI 18.09 or later on the host');
  }
  return new SshEngineError(
    'dial-failed',
    `could not relay the engine: \`${DIAL_COMMAND}\` on the host ended with ${status} (${said})`,
    'check that the engine on the host is running (`ssh host docker version`), then retry',
  );
}

/**
 * The HTTP agent the engine client sends its requests through: each new
 * connection opens a `docker system dial-stdio` channel on one of a few SSH
 * connections, made on demand and closed after a while without channels.
 * Idle HTTP connections are kept a short time for the next request.
 */
export class SshTransport extends Agent {
  /** `ssh://user@host:port`, for messages. */
  readonly address: string;
  readonly #target: SshTarget;
  #connections: SshConnection[] = [];
  #closed = false;

  constructor(target: SshTarget) {
    super({ keepAlive: true, maxFreeSockets: 4, timeout: FREE_SOCKET_TIMEOUT_MS });
    this.#target = target;
    this.address = `ssh://${target.username}@${target.host}:${target.port}`;
  }

  override createConnection(_options: ClientRequestArgs, callback?: (err: Error | null, socket: Duplex) => void): undefined {
    this.#channel().then(
      (socket) => callback?.(null, socket),
      (err: unknown) => callback?.(err instanceof Error ? err : new Error(String(err)), undefined as unknown as Duplex),
    );
    return undefined;
  }

  /** Ends every SSH connection (the engine client is done with). */
  close(): void {
    this.#closed = true;
    this.destroy();
    for (const c of this.#connections) c.close();
    this.#connections = [];
  }

  async #channel(): Promise<ChannelSocket> {
    for (let attempt = 0; ; attempt++) {
      if (this.#closed) throw Object.assign(new Error(`the engine client for ${this.address} was closed`), { code: 'ECONNRESET' });
      const conn = this.#pick();
      conn.opened();
      conn.ref();
      try {
        await conn.ready;
        const channel = await new Promise<ssh2.ClientChannel>((resolve, reject) => {
          conn.client.exec(DIAL_COMMAND, (err, ch) => (err ? reject(err) : resolve(ch)));
        });
        channel.once('close', () => conn.closedChannel());
        return new ChannelSocket(channel, conn, (exit, signal, stderr) => dialError(this.address, exit, signal, stderr));
      } catch (err) {
        conn.unref();
        conn.closedChannel();
        // A server at its MaxSessions refuses the channel: take it elsewhere while this connection has others open.
        if (!(err instanceof SshEngineError) && conn.open > 0 && !conn.dead && attempt < 3) {
          conn.full = true;
          continue;
        }
        throw err;
      }
    }
  }

  #pick(): SshConnection {
    this.#connections = this.#connections.filter((c) => !c.dead);
    for (const c of this.#connections) if (!c.full && c.open < CHANNELS_PER_CONNECTION) return c;
    const conn = new SshConnection(this.#target, this.address, (gone) => {
      this.#connections = this.#connections.filter((c) => c !== gone);
    });
    this.#connections.push(conn);
    return conn;
  }
}
