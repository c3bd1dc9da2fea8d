/**
 * docs/configuration.md is the one page of settings: every variable src/config.ts reads (its schema's fields and the
 * OpenTelemetry SDK's names it lists) has a row there, named in the row's first cell, and no row names one it
 * does not read.
 */
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { SETTING_NAMES } from '../../src/config.js';

const page = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');

/** The variables named in the first cell of each table row. */
const rowNames = page
  .split('\n')
  .map((line) => /^\| ([^|]+) \|/.exec(line)?.[1] ?? '')
  .flatMap((cell) => [...cell.matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((m) => m[1]!));

it('has a row for every setting config.ts reads', () => {
  expect(SETTING_NAMES.length).toBeGreaterThan(100);
  expect(SETTING_NAMES.filter((name) => !rowNames.includes(name))).toEqual([]);
});

it('names no setting in a row\'s first cell that config.ts does not read', () => {
  expect(rowNames.filter((name) => !SETTING_NAMES.includes(name))).toEqual([]);
});
