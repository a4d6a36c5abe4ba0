#!/usr/bin/env node
// ES module entry of the Telic launcher (see server.cjs): `node server.mjs`
// starts `telic serve`; `import { startStdioServer } from './server.mjs'`
// gives the entry point without starting it.
import { createRequire } from 'node:module';
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const launcher = require('./server.cjs');

export const startStdioServer = launcher.startStdioServer;
export const findTelic = launcher.findTelic;
export default launcher;

const self = realpathSync(fileURLToPath(import.meta.url));
const main = process.argv[1] ? (() => { try { return realpathSync(process.argv[1]); } catch (_) { return ''; } })() : '';
if (main === self) startStdioServer();
