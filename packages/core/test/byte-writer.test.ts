import { createByteWriter, isFsError } from '@ctxfs/core';
import { describe, expect, it } from 'vitest';

function recordingSink(failOn?: number) {
  const log: string[] = [];
  let n = 0;
  return {
    log,
    sink: {
      write: async (chunk: Uint8Array) => {
        await new Promise((r) => setTimeout(r, 1));
        if (++n === failOn) throw Object.assign(new Error('disk full'), { code: 'ENOSPC' });
        log.push(`write ${chunk.byteLength}`);
      },
      commit: () => void log.push('commit'),
      abort: () => void log.push('abort'),
    },
  };
}

describe('createByteWriter', () => {
  it('commits unawaited writes in order when closed', async () => {
    const { log, sink } = recordingSink();
    const w = createByteWriter(sink, 'f', 'overwrite');
    void w.write(new Uint8Array(1));
    void w.write(new Uint8Array(2));
    const result = await w.close();
    expect(log).toEqual(['write 1', 'write 2', 'commit']);
    expect(result).toEqual({ path: 'f', bytesWritten: 3, mode: 'overwrite' });
  });

  it('never commits a partial stream: a write failing while close waits makes close fail', async () => {
    const { log, sink } = recordingSink(2);
    const w = createByteWriter(sink, 'f', 'overwrite');
    const first = w.write(new Uint8Array(1));
    const second = w.write(new Uint8Array(2)).catch((e: unknown) => e);
    const closing = w.close().catch((e: unknown) => e);
    await first;
    const [secondErr, closeErr] = await Promise.all([second, closing]);
    expect(isFsError(secondErr, 'ENOSPC')).toBe(true);
    expect(isFsError(closeErr, 'ENOSPC')).toBe(true);
    expect(log).not.toContain('commit');
    expect(log).toContain('abort');
  });

  it('refuses writes after close or abort, and close after abort', async () => {
    const { sink } = recordingSink();
    const w = createByteWriter(sink, 'f', 'append');
    await w.abort();
    await expect(w.write(new Uint8Array(1))).rejects.toMatchObject({ code: 'ECLOSED' });
    await expect(w.close()).rejects.toMatchObject({ code: 'ECLOSED' });
    await w.abort();
  });

  it('aborts when disposed without close', async () => {
    const { log, sink } = recordingSink();
    {
      await using w = createByteWriter(sink, 'f', 'create');
      await w.write(new Uint8Array(4));
    }
    expect(log).toEqual(['write 4', 'abort']);
  });
});

describe('toFsError', () => {
  it('keeps ctxfs codes thrown by primitives through errno()', async () => {
    const { errno, toFsError } = await import('@ctxfs/core');
    const err = toFsError(errno('EPATHESCAPE', 'link points outside'), 'openRead', 'a/link');
    expect(err).toMatchObject({ code: 'EPATHESCAPE', op: 'openRead', path: 'a/link', reason: 'link points outside' });
    expect(toFsError(errno('ENOENT'), 'stat', 'x').code).toBe('ENOENT');
    expect(toFsError(Object.assign(new Error('weird'), { code: 'EWEIRD' }), 'stat', 'x').code).toBe('EIO');
  });
});
