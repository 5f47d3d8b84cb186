// `serverLogs`: the server's log messages from a level up reach the calling tool's ctx.log. A
// 2025 server (SDK 1.x, over stdio and in-process) is asked with logging/setLevel and filters
// itself; a 2026-07-28 one is asked in every request's `_meta`.
import { describe, expect, it } from 'vitest';
import { ConfigError, mcp } from '../lib/index.js';
import { session, thrown } from './helpers/common.js';
import { fixture } from './helpers/harness.js';
import { serveModernHttp } from './helpers/modern-http.js';
import { askingServer } from './fixtures/asking-server.mjs';
import { modernServer } from './fixtures/modern-stdio.mjs';

const open = (mode: 'stdio' | 'inprocess', extra: Record<string, unknown>) =>
  mode === 'stdio'
    ? mcp({ transport: 'stdio', command: process.execPath, args: [fixture('asking-server.mjs')], stderr: 'ignore', ...extra } as any)
    : mcp({ transport: 'inprocess', server: askingServer(), ...extra } as any);

describe.each(['stdio', 'inprocess'] as const)('serverLogs on a 2025 server, over %s', (mode) => {
  it('tells the server’s messages from the level up to the calling tool’s log', async () => {
    const source = open(mode, { serverLogs: 'info' });
    try {
      const by = Object.fromEntries((await source.tools(session)).map((d) => [d.name, d]));
      const logged: Array<[string, string, any]> = [];
      expect(await by.noisy.execute({}, { runId: 'r', log: (l: string, m: string, d: any) => logged.push([l, m, d]) })).toBe('"built"');
      expect(logged.map(([l, m]) => `${l} ${m}`)).toEqual(['warn server build: {"disk":"almost full"}']);
      expect(logged[0][2]).toEqual({ level: 'warning', logger: 'build', data: { disk: 'almost full' } });
    } finally {
      await source.close();
    }
  });

  it('asks for nothing without the key: no message reaches the log', async () => {
    const source = open(mode, {});
    try {
      const by = Object.fromEntries((await source.tools(session)).map((d) => [d.name, d]));
      const logged: string[] = [];
      await by.noisy.execute({}, { runId: 'r', log: (l: string, m: string) => logged.push(`${l} ${m}`) });
      expect(logged.filter((l) => l.includes('server'))).toEqual([]);
    } finally {
      await source.close();
    }
  });
});

describe('serverLogs on a 2026-07-28 server', () => {
  it('names the level in every request’s _meta', async () => {
    const http = await serveModernHttp(modernServer, 'reject');
    const source = mcp({ transport: 'streamable-http', url: http.url, serverLogs: 'warning' } as any);
    try {
      const defs = await source.tools(session);
      await defs.find((d) => d.name === 'echo')!.execute({ text: 'x' }, session);
      const modern = http.requests.filter((r) => r.body.includes('io.modelcontextprotocol/protocolVersion')).map((r) => JSON.parse(r.body));
      expect(modern.length).toBeGreaterThan(1);
      for (const request of modern) expect(request.params._meta['io.modelcontextprotocol/logLevel']).toBe('warning');
    } finally {
      await source.close();
      await http.stop();
    }
  });

  it('refuses an unknown level, typed', () => {
    const err = thrown(() => mcp({ transport: 'stdio', command: 'x', serverLogs: 'verbose' } as any));
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message).toBe("mcp: serverLogs must be one of debug, info, notice, warning, error, critical, alert, emergency, got the string 'verbose'");
  });
});
