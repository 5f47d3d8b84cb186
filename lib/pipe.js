'use strict';

// A stdio child's stdout read by Node's own event loop (not on Windows, whose pipes Node reads
// through handles of its own): a reply read here settles its call in this turn of the loop,
// where a native reader thread would have had to wake this thread in turn. What is read goes
// to the native side as it comes (`feed`), which splits, bounds and routes the lines.

const fs = require('node:fs');
const net = require('node:net');
const { FEED_RESUME_BYTES } = require('./native.js');

// How often a paused reader looks whether the native side has worked through its backlog.
const BACKLOG_LOOK_MS = 5;
// The most one read of a pipe takes (what libuv asks Node for when it reads a pipe).
const READ_BYTES = 64 * 1024;

/** @typedef {import('./calls.js').Calls} Calls */

/**
 * The `pipe` hook: `"<fd> <number>"`, a descriptor that is ours from now on and the number
 * the native side knows its reader by. Never throws (it is called through the port). The
 * socket reaches the source weakly: an open pipe must not keep an abandoned source alive.
 * @param {string} text
 * @param {WeakRef<Calls>} ref
 */
function readPipe(text, ref) {
  const [fd, number] = text.split(' ').map(Number);
  /** @param {string | null} error */
  const ended = (error) => {
    try {
      ref.deref()?.native?.fedEnd(number, error);
    } catch {
      // The native source is gone.
    }
  };
  /** @type {import('node:net').Socket} */
  let socket;
  try {
    // Node reads into one buffer of this pipe's, the same for every read: the native side
    // copies what it keeps before `feed` returns. A stream's own reads allocate 64 KiB each
    // (measured: 10 KB results 14.8-15.9k calls/s this way against 10.0-13.3k). A runtime
    // that ignores `onread` emits 'data' instead, which goes to the same place.
    const buffer = new Uint8Array(READ_BYTES);
    const onread = { buffer, callback: (/** @type {number} */ n, /** @type {Uint8Array} */ into) => read(into.subarray(0, n)) };
    // Node's constructor takes `onread` (its types name it only for connect()).
    socket = new net.Socket(/** @type {import('node:net').SocketConstructorOpts} */ ({ fd, readable: true, writable: false, onread }));
  } catch (err) {
    try {
      fs.closeSync(fd);
    } catch {
      // Already closed.
    }
    ended(messageOf(err));
    return;
  }
  // Calls in flight hold the loop (lib/calls.js); an idle source's pipe must not.
  socket.unref();
  let open = true;
  const stop = () => {
    // The connection is over: nothing more of this pipe is wanted.
    open = false;
    socket.destroy();
  };
  // A runtime thread has more of a huge message to work through than the native side holds:
  // the pipe is not read (the server blocks on its writes) until that falls, rather than read
  // into memory without bound.
  const readOnWhenWorkedThrough = () => {
    // Node's timer has unref() (the DOM types tsc reads lib/ with say a number).
    const timer = /** @type {ReturnType<typeof setTimeout> & { unref(): void }} */ (
      setTimeout(() => {
        if (!open) return;
        let backlog = -1;
        try {
          backlog = ref.deref()?.native?.fedBacklog(number) ?? -1;
        } catch {
          // The native source is gone.
        }
        if (backlog < 0) stop();
        else if (backlog < FEED_RESUME_BYTES) socket.resume();
        else readOnWhenWorkedThrough();
      }, BACKLOG_LOOK_MS)
    );
    timer.unref();
  };
  /** @param {Uint8Array} chunk */
  function read(chunk) {
    if (!open) return;
    const calls = ref.deref();
    let out = /** @type {string | null | boolean} */ (false);
    try {
      if (calls?.native != null) out = (calls.feed ??= calls.native.feeder())(number, chunk);
    } catch (err) {
      ended(messageOf(err));
    }
    if (out === false) return stop();
    if (out === true) {
      socket.pause();
      readOnWhenWorkedThrough();
      return;
    }
    calls?.settle(out);
  }
  socket.on('data', read);
  socket.on('end', () => {
    if (open) ended(null);
    open = false;
  });
  socket.on('error', (err) => {
    if (open) ended(messageOf(err));
    open = false;
    socket.destroy();
  });
}

/** @param {unknown} err */
function messageOf(err) {
  return err instanceof Error ? err.message : String(err);
}

module.exports = { readPipe };
