'use strict';

/**
 * The in-process bridge: the SDK `Transport` object (`start`, `send`, `close`, and the
 * `onmessage`, `onclose`, `onerror` the server sets) handed to the host's `server.connect()`,
 * carrying JSON-RPC messages to and from the native client. close() fires the server side's
 * `onclose`, so the same server object can be connected again.
 *
 * Every function here is called from native code through a thread-safe function that must
 * never throw (a throw there would be fatal), so each one catches what the server does.
 *
 * A server may keep every transport it was ever handed (some do, for metrics). A transport
 * therefore reaches the source only through its `link`, which is cut when the connection
 * ends: a kept transport keeps nothing of ours alive, and says it is closed.
 */
function makeInprocessBridge(server, getNative, settle) {
  let current = null;

  function attach() {
    const native = getNative();
    const link = { native, deliver: native.deliverer(), settle, bridge };
    const transport = new BridgeTransport(link);
    current = { transport, link };
    return (async () => {
      await server.connect(transport);
      return 'ok';
    })();
  }

  // The server closed this transport itself.
  function closedByServer(link) {
    if (current !== null && current.link === link) current = null;
  }

  function toServer(text) {
    const transport = current?.transport;
    if (transport === undefined || typeof transport.onmessage !== 'function') return;
    try {
      transport.onmessage(JSON.parse(text));
    } catch (err) {
      fire(transport, 'onerror', err);
    }
  }

  const { toServerSoon, hold, flush } = handOver(toServer);

  async function detach() {
    const attached = current;
    current = null;
    if (attached !== null) {
      cut(attached.link);
      fire(attached.transport, 'onclose');
    }
    return 'ok';
  }

  const bridge = { closedByServer };
  return { attach, toServer, toServerSoon, detach, hold, flush };
}

/**
 * What the native side hands the server on the JS thread (`toServerSoon`): each message goes
 * to `toServer`, in order, in a microtask or at `flush`.
 * @param {(text: string) => void} toServer
 */
function handOver(toServer) {
  // Called by the native side on the JS thread; the server gets each message in order. What
  // a call sends while it is started (between `hold()` and `flush()`, which Calls.execute puts
  // around it) waits until the caller has registered the call it answers. A call made alone
  // then reaches the server before execute() returns, where a microtask would be one more turn
  // of the queue on its way; the calls started in one turn while others are in flight share
  // one microtask, in which the server takes them in a row (measured faster at 16 and 128
  // calls in flight than each delivered on its own). Anything else sent in a turn goes in
  // that turn's microtask too.
  const soon = [];
  let holding = false;
  let scheduled = false;
  let draining = false;
  const drain = () => {
    scheduled = false;
    // A server that starts a call from inside its onmessage reaches here again: the loop
    // already running takes what that call sent, after what was before it.
    if (draining) return;
    draining = true;
    try {
      for (let i = 0; i < soon.length; i++) toServer(soon[i]);
    } finally {
      soon.length = 0;
      draining = false;
    }
  };
  const later = () => {
    if (scheduled) return;
    scheduled = true;
    queueMicrotask(drain);
  };
  function toServerSoon(text) {
    soon.push(text);
    if (!holding) later();
  }
  function hold() {
    holding = true;
  }
  /** @param {boolean} alone whether the call just started is the only one in flight */
  function flush(alone) {
    holding = false;
    if (soon.length === 0) return;
    if (alone) drain();
    else later();
  }
  return { toServerSoon, hold, flush };
}

// Made outside the bridge's scope, so it holds the link alone. A class: a server that keeps
// every transport it was handed keeps a small object (its link cut, its handlers), where an
// object literal's methods were three closures more per transport (the open/close cycle's V8
// heap). The SDK calls each method on the transport.
class BridgeTransport {
  /** @param {{ native: any, deliver: any, settle: any, bridge: any }} link */
  constructor(link) {
    this.link = link;
    /** @type {((message: unknown) => void) | undefined} */
    this.onmessage = undefined;
    /** @type {(() => void) | undefined} */
    this.onclose = undefined;
    /** @type {((error: unknown) => void) | undefined} */
    this.onerror = undefined;
  }

  async start() {}

  /** @param {unknown} message */
  async send(message) {
    const { deliver, settle } = this.link;
    if (deliver === null) throw new Error('mcp: the in-process connection is closed');
    // Synchronous on purpose: a listChanged is observed before send() returns.
    // A reply that finishes calls settles them here, without waiting for a wake-up.
    settle(deliver(JSON.stringify(message)));
  }

  async close() {
    const link = this.link;
    const { native, bridge } = link;
    if (native !== null) {
      cut(link);
      bridge.closedByServer(link);
      native.detached();
    }
    fire(this, 'onclose');
  }
}

function cut(link) {
  link.native = null;
  link.deliver = null;
  link.settle = null;
  link.bridge = null;
}

function fire(transport, handler, arg) {
  try {
    if (typeof transport[handler] === 'function') transport[handler](arg);
  } catch {
    // The server's own handler failed; nothing of ours depends on it.
  }
}

module.exports = { makeInprocessBridge };
