#!/usr/bin/env node
// CommonJS entry of the Telic launcher (see server.cjs): `node server.js`
// starts `telic serve`; require() or import() of it gives startStdioServer
// (a direct re-export, so Node's ES module loader sees the named export).
// The package.json beside it pins this folder to CommonJS, so it also loads
// inside a project whose package.json says "type":"module".
'use strict';

module.exports = require('./server.cjs');

if (require.main === module) module.exports.startStdioServer();
