import { describe, expect, it } from 'vitest';
import { ConfigError, createMcp, mcp } from '../lib/index.js';
import { thrown } from './helpers/common.js';

const stdio = { transport: 'stdio', command: 'node' } as const;

const refusal = (config: unknown, factory: (c: any) => unknown = mcp): Error => thrown(() => factory(config));

function refuses(config: unknown, message: string) {
  const err = refusal(config);
  expect(err).toBeInstanceOf(ConfigError);
  expect(err.message).toBe(message);
}

const badNumbers: Array<[unknown, string]> = [
  [NaN, 'NaN'],
  [Infinity, 'Infinity'],
  [-Infinity, '-Infinity'],
  [0, '0'],
  [-1, '-1'],
  [1.5, '1.5'],
  ['5', '5'],
  [null, 'null'],
];

describe('ConfigError', () => {
  it('is typed and serializable', () => {
    const err = refusal({ transport: 'stdio' });
    expect(err).toBeInstanceOf(ConfigError);
    expect(err).toBeInstanceOf(Error);
    const typed = err as InstanceType<typeof ConfigError>;
    expect(typed.name).toBe('ConfigError');
    expect(typed.code).toBe('config');
    expect(typed.retryable).toBe(false);
    expect(typed.toWire()).toEqual({
      code: 'config',
      message: "mcp: the stdio transport requires 'command'",
      retryable: false,
    });
  });

  it('createMcp builds every refusal with the host class', () => {
    const seen: unknown[] = [];
    class HostConfigError extends Error {
      constructor(message: string, options?: { cause?: unknown }) {
        super(message, options);
        seen.push(options);
        this.name = 'ConfigError';
      }
    }
    const hostMcp = createMcp({ ConfigError: HostConfigError });
    const err = refusal({ ...stdio, maxTools: 0 }, hostMcp);
    expect(err).toBeInstanceOf(HostConfigError);
    expect(err).not.toBeInstanceOf(ConfigError);
    expect(err.message).toBe("mcp: 'maxTools' must be a positive integer, got 0");
    expect(seen).toEqual([{}]);
    expect(refusal({ transport: 'nope' }, hostMcp)).toBeInstanceOf(HostConfigError);
  });
});

describe('check 1: bounds', () => {
  for (const key of ['maxTools', 'maxPages', 'maxSchemaBytes']) {
    for (const [value, shown] of badNumbers) {
      it(`${key} = ${String(value)}`, () => {
        refuses({ ...stdio, [key]: value }, `mcp: '${key}' must be a positive integer, got ${shown}`);
      });
    }
    it(`${key} accepts a positive integer and undefined`, () => {
      expect(mcp({ ...stdio, [key]: 7 }).id).toBe('mcp:stdio:node');
      expect(mcp({ ...stdio, [key]: undefined }).id).toBe('mcp:stdio:node');
    });
  }
});

describe('check 2: timeouts', () => {
  for (const key of ['connectMs', 'listMs', 'callMs', 'discoveryMs']) {
    for (const [value, shown] of [...badNumbers.filter(([v]) => v !== 1.5), [-5, '-5']] as Array<[unknown, string]>) {
      it(`timeouts.${key} = ${String(value)}`, () => {
        refuses({ ...stdio, timeouts: { [key]: value } }, `mcp: 'timeouts.${key}' must be a positive finite number of milliseconds, got ${shown}`);
      });
    }
    it(`timeouts.${key} accepts fractions`, () => {
      expect(() => mcp({ ...stdio, timeouts: { [key]: 1.5 } })).not.toThrow();
    });
  }
  it('runs after the bounds', () => {
    refuses({ ...stdio, maxPages: -1, timeouts: { listMs: NaN } }, "mcp: 'maxPages' must be a positive integer, got -1");
  });
  it('refuses a timeouts value that is not an object', () => {
    expect(refusal({ ...stdio, timeouts: 5 }).message).toMatch(/^mcp: 'timeouts' must be an object/);
  });
});

describe('check 3: requireBounds', () => {
  const all = { maxTools: 1, maxPages: 1, maxSchemaBytes: 1, timeouts: { discoveryMs: 1 } };
  const cases: Array<[Record<string, unknown>, string]> = [
    [{}, 'maxTools, maxPages, maxSchemaBytes, timeouts.discoveryMs'],
    [{ maxTools: 1 }, 'maxPages, maxSchemaBytes, timeouts.discoveryMs'],
    [{ maxTools: 1, maxPages: 1 }, 'maxSchemaBytes, timeouts.discoveryMs'],
    [{ maxTools: 1, maxPages: 1, maxSchemaBytes: 1 }, 'timeouts.discoveryMs'],
    [{ maxPages: 1, timeouts: { discoveryMs: 5 } }, 'maxTools, maxSchemaBytes'],
    [{ ...all, maxTools: undefined }, 'maxTools'],
    [{ ...all, timeouts: { listMs: 5 } }, 'timeouts.discoveryMs'],
  ];
  for (const [bounds, missing] of cases) {
    it(`missing ${missing}`, () => {
      refuses({ ...stdio, requireBounds: true, ...bounds }, `mcp: requireBounds demands every discovery bound; missing ${missing}`);
    });
  }
  it('accepts every bound declared, and ignores requireBounds: false', () => {
    expect(() => mcp({ ...stdio, requireBounds: true, ...all })).not.toThrow();
    expect(() => mcp({ ...stdio, requireBounds: false })).not.toThrow();
  });
  it('runs after the timeouts', () => {
    refuses({ ...stdio, requireBounds: true, timeouts: { callMs: 0 } }, "mcp: 'timeouts.callMs' must be a positive finite number of milliseconds, got 0");
  });
});

describe('check 4: drift', () => {
  for (const [value, shown] of [
    ['ignore', 'ignore'],
    ['', ''],
    [1, '1'],
    [null, 'null'],
  ] as Array<[unknown, string]>) {
    it(`drift = ${JSON.stringify(value)}`, () => {
      refuses({ ...stdio, drift: value }, `mcp: 'drift' must be 'rekey' or 'refuse', got '${shown}'`);
    });
  }
  it('accepts both literals', () => {
    expect(() => mcp({ ...stdio, drift: 'rekey' })).not.toThrow();
    expect(() => mcp({ ...stdio, drift: 'refuse' })).not.toThrow();
  });
  it('runs after requireBounds', () => {
    expect(refusal({ ...stdio, requireBounds: true, drift: 'x' }).message).toMatch(/requireBounds/);
  });
});

describe('check 5: http.headers', () => {
  const http = { transport: 'streamable-http', url: 'http://127.0.0.1:1/mcp' } as const;
  for (const headers of [5, 'Bearer x', true, null]) {
    it(`headers = ${JSON.stringify(headers)}`, () => {
      const err = refusal({ ...http, http: { headers } });
      expect(err).toBeInstanceOf(ConfigError);
      expect(err.message).toBe("mcp: 'http.headers' must be a record of header values or a (possibly async) function returning one");
    });
  }
  it('accepts a record, a function and an async function', () => {
    expect(() => mcp({ ...http, http: { headers: { authorization: 'Bearer x' } } })).not.toThrow();
    expect(() => mcp({ ...http, http: { headers: () => ({}) } })).not.toThrow();
    expect(() => mcp({ ...http, http: { headers: async () => ({}) } })).not.toThrow();
  });
  it('runs before the transport checks', () => {
    expect(refusal({ ...stdio, http: { headers: 5 } }).message).toMatch(/'http.headers' must be/);
  });
  it('never echoes a header value', () => {
    const err = refusal({ ...http, http: { headers: { authorization: 12345678 } } });
    expect(err.message).toMatch(/authorization/);
    expect(err.message).not.toMatch(/12345678/);
  });
});

describe('check 6: transport keys', () => {
  const suffix = '(exactly the keys matching the chosen transport)';
  it('stdio requires command', () => {
    refuses({ transport: 'stdio' }, "mcp: the stdio transport requires 'command'");
    refuses({ transport: 'stdio', command: '' }, "mcp: the stdio transport requires 'command'");
  });
  it('streamable-http requires url', () => {
    refuses({ transport: 'streamable-http' }, "mcp: the streamable-http transport requires 'url'");
  });
  it('inprocess requires server', () => {
    refuses({ transport: 'inprocess' }, "mcp: the inprocess transport requires 'server'");
  });
  const forbidden: Array<[string, Record<string, unknown>, string[]]> = [
    ['stdio', { command: 'node' }, ['url', 'server', 'http']],
    ['streamable-http', { url: 'http://127.0.0.1:1/' }, ['command', 'args', 'server', 'env', 'cwd', 'stderr']],
    ['inprocess', { server: { connect: async () => {} } }, ['command', 'args', 'url', 'http', 'env', 'cwd', 'stderr']],
  ];
  for (const [transport, base, keys] of forbidden) {
    for (const key of keys) {
      it(`${transport} forbids ${key}`, () => {
        refuses(
          { transport, ...base, [key]: key === 'http' ? {} : key === 'args' ? [] : 'x' },
          `mcp: '${key}' is not a config key of the '${transport}' transport ${suffix}`,
        );
      });
    }
  }
  it('a forbidden key set to undefined counts as absent', () => {
    expect(() => mcp({ ...stdio, url: undefined, server: undefined, http: undefined } as any)).not.toThrow();
  });
  for (const transport of ['sse', 'websocket', undefined, 42]) {
    it(`unknown transport ${String(transport)}`, () => {
      refuses({ transport, command: 'node' }, `mcp: unknown transport '${String(transport)}'`);
    });
  }
});

describe('checks beyond the original', () => {
  it('refuses an unknown top-level key, naming it', () => {
    const err = refusal({ ...stdio, maxtools: 5 });
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message).toMatch(/^mcp: unknown config key 'maxtools'/);
    expect(refusal({ ...stdio, timeouts: { callms: 5 } }).message).toMatch(/^mcp: unknown config key 'timeouts.callms'/);
  });
  it('refuses malformed allow and deny', () => {
    expect(refusal({ ...stdio, allow: 'read' }).message).toMatch(/^mcp: 'allow' must be an array of strings/);
    expect(refusal({ ...stdio, deny: [1] }).message).toMatch(/^mcp: 'deny' must be an array of strings/);
  });
  it('refuses unknown risk labels', () => {
    expect(refusal({ ...stdio, risk: { rm: 'dangerous' } }).message).toBe(
      "mcp: 'risk.rm' must be one of read, write, network, execute, destructive, got 'dangerous'",
    );
  });
  it('refuses approval values that are not boolean', () => {
    expect(refusal({ ...stdio, approval: { rm: 'yes' } }).message).toBe("mcp: 'approval.rm' must be a boolean, got yes");
    expect(refusal({ ...stdio, approval: 'all' }).message).toMatch(/^mcp: 'approval' must be true or a record/);
  });
  it('checks the stdio extension keys', () => {
    expect(refusal({ ...stdio, stderr: 'file' }).message).toBe("mcp: 'stderr' must be 'inherit', 'ignore' or 'pipe', got 'file'");
    expect(refusal({ ...stdio, cwd: 5 }).message).toBe("mcp: 'cwd' must be a string, got 5");
    const env = refusal({ ...stdio, env: { TOKEN: 123456 } });
    expect(env.message).toMatch(/'env.TOKEN'/);
    expect(env.message).not.toMatch(/123456/);
    expect(() => mcp({ ...stdio, env: { A: 'b' }, cwd: '/tmp', stderr: 'ignore' })).not.toThrow();
  });
  it('refuses an inprocess server without connect', () => {
    expect(refusal({ transport: 'inprocess', server: {} }).message).toMatch(/^mcp: 'server' must be an object with a connect/);
  });
  it('refuses a non-http url', () => {
    expect(refusal({ transport: 'streamable-http', url: 'ftp://x' }).message).toMatch(/^mcp: 'url' must be an http/);
  });
  it('refuses a config that is not an object', () => {
    expect(refusal(undefined)).toBeInstanceOf(ConfigError);
  });
});

describe('the source', () => {
  it('has the ids of the contract', () => {
    expect(mcp({ ...stdio, command: 'github-mcp-server' }).id).toBe('mcp:stdio:github-mcp-server');
    expect(mcp({ transport: 'streamable-http', url: 'http://127.0.0.1:9/mcp' }).id).toBe('mcp:http:http://127.0.0.1:9/mcp');
    expect(mcp({ transport: 'inprocess', server: { connect: async () => {} } }).id).toBe('mcp:inprocess');
  });

  it('exposes tools, close and describeRegulatedPosture', () => {
    const s = mcp(stdio);
    expect(typeof s.tools).toBe('function');
    expect(typeof s.close).toBe('function');
    expect(typeof s.describeRegulatedPosture).toBe('function');
  });

  it('describes its posture without bounds', () => {
    expect(mcp(stdio).describeRegulatedPosture()).toEqual({
      regulatedPosture: 1,
      kind: 'mcp-source',
      name: 'mcp:stdio:node',
      drift: 'rekey',
      bounds: { declared: false },
    });
  });

  it('describes its posture with every bound declared', () => {
    const s = mcp({
      ...stdio,
      drift: 'refuse',
      maxTools: 10,
      maxPages: 2,
      maxSchemaBytes: 4096,
      timeouts: { discoveryMs: 500, listMs: 100 },
    });
    const posture = s.describeRegulatedPosture();
    expect(posture).toEqual({
      regulatedPosture: 1,
      kind: 'mcp-source',
      name: 'mcp:stdio:node',
      drift: 'refuse',
      bounds: { declared: true, maxTools: 10, maxPages: 2, maxSchemaBytes: 4096, discoveryMs: 500 },
    });
    expect(Object.keys(posture.bounds)).toEqual(['declared', 'maxTools', 'maxPages', 'maxSchemaBytes', 'discoveryMs']);
  });

  it('re-reads the posture from a mutated config', () => {
    const config: any = { ...stdio, maxTools: 10, maxPages: 2, maxSchemaBytes: 10, timeouts: { discoveryMs: 5 } };
    const s = mcp(config);
    expect(s.describeRegulatedPosture().bounds.declared).toBe(true);
    config.maxPages = undefined;
    config.drift = 'refuse';
    config.timeouts.discoveryMs = 9;
    const after = s.describeRegulatedPosture();
    expect(after.drift).toBe('refuse');
    expect(after.bounds).toEqual({ declared: false, maxTools: 10, maxSchemaBytes: 10, discoveryMs: 9 });
    delete config.timeouts;
    expect(s.describeRegulatedPosture().bounds).toEqual({ declared: false, maxTools: 10, maxSchemaBytes: 10 });
  });

  it('works through a Proxy and with this bound by apply', async () => {
    const s = mcp({ ...stdio, maxTools: 3 });
    const proxy = new Proxy(s, {});
    expect(proxy.describeRegulatedPosture().name).toBe('mcp:stdio:node');
    expect(s.describeRegulatedPosture.apply({}, []).name).toBe('mcp:stdio:node');
    await expect(proxy.close()).resolves.toBeUndefined();
    await expect(s.close.apply(undefined, [])).resolves.toBeUndefined();
  });
});
