// Values as JavaScript source, and the small pure helpers every stage of ttgen.mjs shares. A
// value is rendered deterministically, or not at all (null) when it has no source of its own.

import { createHash } from 'node:crypto';

export function isPlainObject(v) {
  if (v === null || typeof v !== 'object') return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

export const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

export function render(v, depth = 0) {
  if (depth > 6) return null;
  switch (typeof v) {
    case 'undefined': return 'undefined';
    case 'boolean': return String(v);
    case 'number':
      if (Number.isNaN(v)) return 'NaN';
      if (Object.is(v, -0)) return '-0';
      if (!Number.isFinite(v)) return v > 0 ? 'Infinity' : '-Infinity';
      return String(v);
    case 'bigint': return `${v}n`;
    case 'string': return JSON.stringify(v);
    case 'object': {
      if (v === null) return 'null';
      if (Array.isArray(v)) {
        const parts = [];
        for (let i = 0; i < v.length; i++) {
          if (!(i in v)) return null;
          const r = render(v[i], depth + 1);
          if (r === null) return null;
          parts.push(r);
        }
        return `[${parts.join(', ')}]`;
      }
      if (!isPlainObject(v)) return null;
      if (Object.getOwnPropertySymbols(v).length) return null;
      const parts = [];
      for (const k of Object.keys(v)) {
        const d = Object.getOwnPropertyDescriptor(v, k);
        if (!('value' in d)) return null;
        const r = render(d.value, depth + 1);
        if (r === null) return null;
        parts.push(`${IDENT.test(k) ? k : JSON.stringify(k)}: ${r}`);
      }
      return parts.length ? `{ ${parts.join(', ')} }` : '{}';
    }
    default: return null;
  }
}

export function typeName(v) {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

export function hash(text, n = 6) {
  return createHash('sha256').update(text).digest('hex').slice(0, n);
}
