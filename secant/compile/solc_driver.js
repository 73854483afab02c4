// secant's solc-js driver: one long-lived node process per compiler version.
//
// Usage: node solc_driver.js <directory of the npm "solc" package> [<directory of a newer one>]
// Releases before 0.4.11 answer no standard JSON and their packages' wrappers differ: the
// second package's wrapper (0.4.11 or later) is put around the first's compiler, which then
// takes legacy requests ({"sources": {name: text}, "optimize": bool}) and answers its own
// JSON; secant translates both ways (secant/compile/legacy.py).
// Protocol (line-delimited, UTF-8): every line this driver writes for secant starts with
// MARK; anything else on stdout (e.g. emscripten chatter) is ignored by the reader.
//   -> {"ready": true, "version": "<long version>", "heap": bool}   once, after loading
//      the compiler; "heap": inputs of any size are taken (see HEAP_INPUT)
//   <- {"id": N, "input": {standard-JSON input}, "roots": ["dir", ...]}   one per line
//      (with a second package: {"id": N, "legacy": {legacy request}, "roots": [...]})
//   -> {"id": N, "output": {standard-JSON output, or the legacy answer}}
//      or {"id": N, "error": "message"}
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

// Packages before 0.3.2 keep the compiler under bin/.
function soljsonPath(pkg) {
  const direct = path.join(pkg, 'soljson.js');
  return fs.existsSync(direct) ? direct : path.join(pkg, 'bin', 'soljson-latest.js');
}

let solc;
const wrapperPackage = process.argv[3];
try {
  solc = wrapperPackage
    ? require(path.join(wrapperPackage, 'wrapper.js'))(require(soljsonPath(process.argv[2])))
    : require(process.argv[2]);
} catch (e) {
  send({ ready: false, error: String((e && e.message) || e) });
  process.exit(3);
}
const version = solc.version();
// The emscripten module under the wrapper (the same instance: node caches modules by path).
let soljson = null;
try {
  soljson = require(soljsonPath(process.argv[2]));
} catch (e) {
  soljson = null;
}
// solc-js's own call copies the input onto the WebAssembly stack (5 MiB, up to 4 bytes a
// character): past about 1.2 MB of sources it fails with "memory access out of bounds".
// Above HEAP_INPUT bytes the input goes on the heap instead, where it may be any size, for
// the compilers that export the allocator (0.6 and later). Such an input is compiled with
// no import callback: secant sends every source inline, and a missing one is then an error
// in the output, as it is when the callback finds nothing.
const HEAP_INPUT = 512 * 1024;
const heapInput = Boolean(soljson && soljson._solidity_compile && soljson._solidity_alloc &&
                          soljson.stringToUTF8 && soljson.lengthBytesUTF8 && soljson.UTF8ToString);

function compileOnHeap(input) {
  const size = soljson.lengthBytesUTF8(input) + 1;
  const pointer = soljson._solidity_alloc(size);
  try {
    soljson.stringToUTF8(input, pointer, size);
    return soljson.UTF8ToString(soljson._solidity_compile(pointer, 0, 0));
  } finally {
    if (soljson._solidity_free) soljson._solidity_free(pointer);
    if (soljson._solidity_reset) soljson._solidity_reset();
  }
}
// solc-js 0.4.x wrappers take the import callback as a bare function; later ones as
// {import: fn}. compileStandardWrapper also translates for compilers without standard JSON.
// A newer wrapper taken for an old compiler is a 0.4.x one.
const legacyCallback = Boolean(wrapperPackage) || /^0\.4\./.test(version);
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

send({ ready: true, version: version, heap: heapInput });

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
    if (request.legacy) {
      // The wrapper's compile uses the compiler's import callback when it has one (0.2.1
      // and later), else passes every source at once; it returns the parsed answer.
      const answer = solc.compile({ sources: request.legacy.sources }, request.legacy.optimize ? 1 : 0,
                                  reader);
      send({ id: request.id, output: answer });
      return;
    }
    const input = typeof request.input === 'string' ? request.input : JSON.stringify(request.input);
    const output = heapInput && input.length > HEAP_INPUT ? compileOnHeap(input)
      : legacyCallback ? compileFn(input, reader) : compileFn(input, { import: reader });
    // Raw newlines in JSON text can only be whitespace between tokens.
    process.stdout.write(
      MARK + '{"id":' + JSON.stringify(request.id) + ',"output":' + output.replace(/[\r\n]+/g, ' ') + '}\n'
    );
  } catch (e) {
    send({ id: request.id, error: String((e && e.message) || e) });
  }
});
rl.on('close', () => process.exit(0));
