// The Khronos glTF validator (the `gltf-validator` npm package, as glTF tooling runs it in
// its CI) on a list of .glb / .gltf files, in one node process.
//
//   node validate.mjs < paths.json        (a JSON list of absolute paths)
//
// Prints one JSON line per file: {path, errors, warnings, infos, hints, messages, codes}:
// `messages` every error as "CODE pointer: message", `codes` how many issues of each code
// (any severity) (unlimited issues, external buffers read from beside the file). A file that cannot be read or parsed at all is one
// error ("UNREADABLE ..."). Exit code 0 whatever the files hold: the caller judges.
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import validator from "gltf-validator";

const paths = JSON.parse(readFileSync(0, "utf8"));
for (const file of paths) {
  let line;
  try {
    const report = await validator.validateBytes(new Uint8Array(readFileSync(file)), {
      uri: path.basename(file),
      maxIssues: 0,
      writeTimestamp: false,
      externalResourceFunction: (uri) =>
        readFile(path.resolve(path.dirname(file), decodeURIComponent(uri))).then((data) => new Uint8Array(data)),
    });
    const issues = report.issues;
    line = {
      path: file,
      errors: issues.numErrors,
      warnings: issues.numWarnings,
      infos: issues.numInfos,
      hints: issues.numHints,
      messages: issues.messages
        .filter((m) => m.severity === 0)
        .map((m) => `${m.code} ${m.pointer ?? ""}: ${m.message}`),
      codes: {},
    };
    for (const m of issues.messages) line.codes[m.code] = (line.codes[m.code] ?? 0) + 1;
  } catch (error) {
    line = { path: file, errors: 1, warnings: 0, infos: 0, hints: 0, messages: [`UNREADABLE: ${error}`], codes: {} };
  }
  process.stdout.write(JSON.stringify(line) + "\n");
}
