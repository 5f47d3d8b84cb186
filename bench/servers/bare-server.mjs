// The least an in-process server can be: a `connect(transport)` whose `onmessage` answers
// initialize, tools/list (one echo tool) and tools/call (the text back) in a microtask, as the
// SDK's servers answer. With the server's own work nearly gone, a client's in-process call
// measures that client's path alone (bench/NOTES.md, "The in-process call, the server taken
// out").
const TOOLS = [{ name: 'echo', description: 'Echo text.', inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } }];

function answer(message) {
  switch (message.method) {
    case 'initialize':
      return { result: { protocolVersion: message.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'bare', version: '1.0.0' } } };
    case 'tools/list':
      return { result: { tools: TOOLS } };
    case 'tools/call':
      return { result: { content: [{ type: 'text', text: String(message.params.arguments?.text) }] } };
    case 'ping':
      return { result: {} };
    default:
      return { error: { code: -32601, message: `no method ${message.method}` } };
  }
}

export function bareServer() {
  return {
    async connect(transport) {
      transport.onmessage = (message) => {
        if (message.id === undefined) return; // a notification
        const reply = { jsonrpc: '2.0', id: message.id, ...answer(message) };
        queueMicrotask(() => transport.send(reply));
      };
      await transport.start();
    },
  };
}
