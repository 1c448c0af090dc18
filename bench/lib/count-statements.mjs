/**
 * Preloaded into the benchmarked server (`node --import`) when BENCH_STATEMENT_FILE is set:
 * counts the statements the process sends to PostgreSQL, whatever the pool or driver above the
 * socket, by reading the frontend protocol it writes to port 5432 (PGPORT): one Execute ('E') or
 * simple Query ('Q') message per statement. On SIGUSR2 it writes the count to that file as
 * `<sequence> <count>`. Reading the protocol costs the server a little CPU; counting only.
 */
import { writeFileSync } from 'node:fs';
import net from 'node:net';

const file = process.env.BENCH_STATEMENT_FILE;
const port = Number(process.env.BENCH_STATEMENT_PORT ?? 5432);
let statements = 0;
let sequence = 0;

if (file) {
  const write = net.Socket.prototype.write;
  const state = new WeakMap();
  net.Socket.prototype.write = function (chunk, ...rest) {
    if (this.remotePort === port && chunk instanceof Uint8Array) count(this, chunk);
    return write.call(this, chunk, ...rest);
  };
  process.on('SIGUSR2', () => {
    sequence += 1;
    writeFileSync(file, `${sequence} ${statements}`);
  });

  /** Walks the messages of one write; a message may span writes (`skip` carries over). */
  function count(socket, bytes) {
    let s = state.get(socket);
    if (!s) {
      // The startup message has no type byte: its length is its first four bytes.
      s = { started: false, skip: 0, header: [] };
      state.set(socket, s);
    }
    let i = 0;
    while (i < bytes.length) {
      if (s.skip > 0) {
        const n = Math.min(s.skip, bytes.length - i);
        s.skip -= n;
        i += n;
        continue;
      }
      s.header.push(bytes[i]);
      i += 1;
      const size = s.started ? 5 : 4;
      if (s.header.length < size) continue;
      const h = s.header;
      const at = s.started ? 1 : 0;
      const length = ((h[at] << 24) | (h[at + 1] << 16) | (h[at + 2] << 8) | h[at + 3]) >>> 0;
      if (s.started) {
        const type = String.fromCharCode(h[0]);
        if (type === 'E' || type === 'Q') statements += 1;
        s.skip = length - 4;
      } else {
        // Startup (or SSL request): length includes itself.
        s.skip = length - 4;
        if (length !== 8) s.started = true; // an SSL request (8 bytes) is followed by the startup
      }
      s.header = [];
    }
  }
}
