#!/usr/bin/env node
// Telic MCP launcher for host configs written for the reference server, which
// run `node <pack>/dist/mcp/server.js` with no arguments (PROTOCOL §1.1),
// or import it and call startStdioServer() (the Kiro IDE pack's launch.mjs).
// It starts the native `telic serve` with this process's stdio, environment
// and working directory, forwards SIGINT/SIGTERM/SIGHUP, and exits with the
// child's exit code. CommonJS (.cjs, so it loads the same under a
// "type":"module" package.json), no dependencies, Node >= 18. server.js
// (CommonJS) and server.mjs (ES module) re-export it.
//
// Binary lookup (first executable file wins):
//   1. $TELIC_BIN
//   2. telic beside this script, then ../build/telic relative to it
//   3. telic on PATH
'use strict';

const childProcess = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const EXE = process.platform === 'win32' ? 'telic.exe' : 'telic';

function fail(message) {
  process.stderr.write('Telic MCP failed: ' + String(message).replace(/[\r\n\t]+/g, ' ').slice(0, 800) + '\n');
  process.exit(1);
}

function isExecutableFile(candidate) {
  try {
    if (!fs.statSync(candidate).isFile()) return false;
    fs.accessSync(candidate, fs.constants.X_OK);
    return true;
  } catch (_) {
    return false;
  }
}

function findTelic() {
  const candidates = [];
  if (process.env.TELIC_BIN) candidates.push(path.resolve(process.env.TELIC_BIN));
  candidates.push(path.join(__dirname, EXE));
  candidates.push(path.join(__dirname, '..', 'build', EXE));
  // Empty PATH entries (meaning the working directory) are skipped on purpose:
  // the working directory is the user's repository, not a trusted bin dir.
  for (const dir of (process.env.PATH || '').split(path.delimiter)) {
    if (dir && path.isAbsolute(dir)) candidates.push(path.join(dir, EXE));
  }
  return candidates.find(isExecutableFile) || null;
}

let started = null;

// Starts `telic serve` on this process's stdio and ends this process the way
// the child ends (exit code or signal). Idempotent: a second call returns the
// first call's promise. The promise never resolves: the process exits first.
function startStdioServer(args = process.argv.slice(2)) {
  if (started) return started;
  started = new Promise(() => {
    const telic = findTelic();
    if (!telic) fail('telic binary not found (set TELIC_BIN or put telic on PATH)');

    const child = childProcess.spawn(telic, ['serve', ...args], {
      stdio: 'inherit',
      windowsHide: true,
    });

    const forwarded = ['SIGINT', 'SIGTERM', 'SIGHUP'];
    const forward = (signal) => {
      try {
        child.kill(signal);
      } catch (_) {
        // The child is already gone; its exit handler finishes the job.
      }
    };
    for (const signal of forwarded) process.on(signal, forward);

    child.on('error', (error) => fail('cannot start ' + telic + ': ' + error.message));

    child.on('exit', (code, signal) => {
      if (signal) {
        // Die the way the child died, so the host sees the same signal status.
        for (const s of forwarded) process.removeListener(s, forward);
        const number = os.constants.signals[signal] || 0;
        try {
          process.kill(process.pid, signal);
        } catch (_) {
          // fall through to the exit below
        }
        setTimeout(() => process.exit(128 + number), 100);
        return;
      }
      process.exit(code === null ? 1 : code);
    });
  });
  return started;
}

module.exports = { startStdioServer, findTelic };

// Run directly (`node server.cjs`): start at once.
if (require.main === module) startStdioServer();
