/**
 * Preloaded into the benchmarked server (`node --import`) when BENCH_STATEMENT_FILE is set:
 * counts the statements the process sends to PostgreSQL, whatever the pool or driver above the
 * socket, by reading the frontend protocol it writes to port 5432 (PGPORT): one Execute ('E') or
 * simple Query ('Q') message per statement. Statements that write the server's deferred batches
 * (audit rows, learning signals, saved searches: flushed off the response path, many requests to
 * one insert) are also counted apart, told by the text of the statement they execute (from its
 * Parse or Query message, the statement a Bind names). On SIGUSR2 it writes
 * `<sequence> <statements> <deferred>` to that file (renamed into place, so a reader never sees
 * half of it). Reading the protocol costs the server a little CPU; counting only.
 */
import { renameSync, writeFileSync } from 'node:fs';
import net from 'node:net';

const file = process.env.BENCH_STATEMENT_FILE;
const port = Number(process.env.BENCH_STATEMENT_PORT ?? 5432);
/** Tables only the server's deferred batch writers insert into. */
const DEFERRED = /^\s*insert\s+into\s+"?(audit_log|learning_signals|saved_searches)"?/i;
/** Bytes of a Parse, Bind or Query message kept: enough for names and the start of the text. */
const KEEP = 256;
let statements = 0;
let deferred = 0;
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
    writeFileSync(`${file}.tmp`, `${sequence} ${statements} ${deferred}`);
    renameSync(`${file}.tmp`, file);
  });

  /** The NUL-terminated strings at the start of a message body. */
  function strings(body, n) {
    const out = [];
    let at = 0;
    for (let k = 0; k < n; k += 1) {
      const end = body.indexOf(0, at);
      out.push(body.subarray(at, end < 0 ? body.length : end).toString('utf8'));
      if (end < 0) break;
      at = end + 1;
    }
    return out;
  }

  /** A whole message seen (body cut at KEEP bytes): counts it, or notes what it names. */
  function message(s, type, body) {
    if (type === 'P') {
      const [name = '', text = ''] = strings(body, 2);
      s.deferredStatements.set(name, DEFERRED.test(text));
    } else if (type === 'B') {
      const [, name = ''] = strings(body, 2);
      s.boundDeferred = s.deferredStatements.get(name) === true;
    } else if (type === 'E') {
      statements += 1;
      if (s.boundDeferred) deferred += 1;
    } else if (type === 'Q') {
      statements += 1;
      if (DEFERRED.test(strings(body, 1)[0] ?? '')) deferred += 1;
    }
  }

  /** Walks the messages of one write; a message may span writes (its state carries over). */
  function count(socket, bytes) {
    let s = state.get(socket);
    if (!s) {
      // The startup message has no type byte: its length is its first four bytes.
      s = {
        started: false,
        skip: 0,
        header: [],
        type: '',
        keep: 0,
        body: [],
        deferredStatements: new Map(),
        boundDeferred: false,
      };
      state.set(socket, s);
    }
    let i = 0;
    while (i < bytes.length) {
      if (s.keep > 0) {
        const n = Math.min(s.keep, bytes.length - i);
        s.body.push(bytes.subarray(i, i + n));
        s.keep -= n;
        i += n;
        if (s.keep === 0) message(s, s.type, Buffer.concat(s.body));
        continue;
      }
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
        const bodyLength = length - 4;
        if (type === 'P' || type === 'B' || type === 'Q') {
          // Keep the start of the body (the message is handled once it is in), skip the rest.
          s.type = type;
          s.body = [];
          s.keep = Math.min(KEEP, bodyLength);
          s.skip = bodyLength - s.keep;
          if (s.keep === 0) message(s, type, Buffer.alloc(0));
        } else {
          if (type === 'E') message(s, type, Buffer.alloc(0));
          s.skip = bodyLength;
        }
      } else {
        // Startup (or SSL request): length includes itself.
        s.skip = length - 4;
        if (length !== 8) s.started = true; // an SSL request (8 bytes) is followed by the startup
      }
      s.header = [];
    }
  }
}
