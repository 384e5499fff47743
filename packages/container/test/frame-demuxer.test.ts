import { describe, expect, it } from 'vitest';
import { FrameDemuxer, STDERR, STDOUT } from '../src/frame-demuxer.ts';

function frame(stream: number, payload: string): Buffer {
  const body = Buffer.from(payload);
  const header = Buffer.alloc(8);
  header[0] = stream;
  header.writeUInt32BE(body.length, 4);
  return Buffer.concat([header, body]);
}

describe('FrameDemuxer', () => {
  it('reassembles stdout and stderr however the connection splits frames and headers', () => {
    const wire = Buffer.concat([frame(STDOUT, 'hello '), frame(STDERR, 'oops'), frame(STDOUT, 'world'), frame(STDOUT, '')]);
    for (let size = 1; size <= wire.length; size++) {
      const demux = new FrameDemuxer();
      let out = '';
      let err = '';
      for (let i = 0; i < wire.length; i += size) {
        demux.push(wire.subarray(i, i + size), (stream, part) => {
          if (stream === STDERR) err += part.toString();
          else out += part.toString();
        });
      }
      expect([out, err], `chunk size ${size}`).toEqual(['hello world', 'oops']);
    }
  });
});
