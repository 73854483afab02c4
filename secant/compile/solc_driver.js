// secant's solc-js driver: one long-lived node process per compiler version.
//
// Usage: node solc_driver.js <directory of the npm "solc" package>
// Protocol (line-delimited, UTF-8): every line this driver writes for secant starts with
// MARK; anything else on stdout (e.g. emscripten chatter) is ignored by the reader.
//   -> {"ready": true, "version": "<long version>"}      once, after loading the compiler
//   <- {"id": N, "input": {standard-JSON input}, "roots": ["dir", ...]}   one per line
//   -> {"id": N, "output": {standard-JSON output}}   or   {"id": N, "error": "message"}
// Imports missing from the input are read from disk relative to each of "roots" in turn.
'use strict';
const fs = require('fs');
const path = require('path');
const readline = require('readline');

const MARK = '\u0001secant ';
const send = (obj) => process.stdout.write(MARK + JSON.stringify(obj) + '\n');
const toStderr = (...args) => process.stderr.write(args.join(' ') + '\n');
console.log = toStderr;
console.info = toStderr;
console.warn = toStderr;

let solc;
try {
  solc = require(process.argv[2]);
} catch (e) {
  send({ ready: false, error: String((e && e.message) || e) });
  process.exit(3);
}
const version = solc.version();
// solc-js 0.4.x wrappers take the import callback as a bare function; later ones as
// {import: fn}. compileStandardWrapper also translates for compilers without standard JSON.
const legacyCallback = /^0\.4\./.test(version);
const compileFn = solc.compileStandardWrapper || solc.compile;

function importReader(roots) {
  return function (name) {
    for (const root of roots) {
      const file = path.isAbsolute(name) ? name : path.join(root, name);
      try {
        return { contents: fs.readFileSync(file, 'utf8') };
      } catch (e) {
        // try the next root
      }
    }
    return { error: 'File not found: ' + name };
  };
}

send({ ready: true, version: version });

const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
rl.on('line', (line) => {
  if (!line.trim()) return;
  let request;
  try {
    request = JSON.parse(line);
  } catch (e) {
    send({ id: null, error: 'bad request: ' + e.message });
    return;
  }
  try {
    const reader = importReader(request.roots || []);
    const input = typeof request.input === 'string' ? request.input : JSON.stringify(request.input);
    const output = legacyCallback ? compileFn(input, reader) : compileFn(input, { import: reader });
    // Raw newlines in JSON text can only be whitespace between tokens.
    process.stdout.write(
      MARK + '{"id":' + JSON.stringify(request.id) + ',"output":' + output.replace(/[\r\n]+/g, ' ') + '}\n'
    );
  } catch (e) {
    send({ id: request.id, error: String((e && e.message) || e) });
  }
});
rl.on('close', () => process.exit(0));
