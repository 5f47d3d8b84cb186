'use strict';

/**
 * The in-process bridge: the SDK `Transport` object (`start`, `send`, `close`, and the
 * `onmessage`, `onclose`, `onerror` the server sets) handed to the host's `server.connect()`,
 * carrying JSON-RPC messages to and from the native client. close() fires the server side's
 * `onclose`, so the same server object can be connected again.
 *
 * Every function here is called from native code through a thread-safe function that must
 * never throw (a throw there would be fatal), so each one catches what the server does.
 */
function makeInprocessBridge(server, getNative, settle) {
  let current = null;

  function attach() {
    const native = getNative();
    const transport = {
      onmessage: undefined,
      onclose: undefined,
      onerror: undefined,
      async start() {},
      async send(message) {
        if (current !== transport) throw new Error('mcp: the in-process connection is closed');
        // Synchronous on purpose: a listChanged is observed before send() returns.
        // A reply that finishes calls settles them here, without waiting for a wake-up.
        settle(native.deliver(JSON.stringify(message)));
      },
      async close() {
        if (current === transport) {
          current = null;
          native.detached();
        }
        fire(transport, 'onclose');
      },
    };
    current = transport;
    return (async () => {
      await server.connect(transport);
      return 'ok';
    })();
  }

  function toServer(text) {
    const transport = current;
    if (transport === null || typeof transport.onmessage !== 'function') return;
    try {
      transport.onmessage(JSON.parse(text));
    } catch (err) {
      fire(transport, 'onerror', err);
    }
  }

  // Called by the native side on the JS thread, in the middle of starting a call: the server
  // gets the message in a microtask, once the caller has registered the call it answers.
  // Messages started in one turn share one microtask, in order.
  const soon = [];
  const drain = () => {
    for (let i = 0; i < soon.length; i++) toServer(soon[i]);
    soon.length = 0;
  };
  function toServerSoon(text) {
    if (soon.push(text) === 1) queueMicrotask(drain);
  }

  async function detach() {
    const transport = current;
    current = null;
    if (transport !== null) fire(transport, 'onclose');
    return 'ok';
  }

  return { attach, toServer, toServerSoon, detach };
}

function fire(transport, handler, arg) {
  try {
    if (typeof transport[handler] === 'function') transport[handler](arg);
  } catch {
    // The server's own handler failed; nothing of ours depends on it.
  }
}

module.exports = { makeInprocessBridge };
