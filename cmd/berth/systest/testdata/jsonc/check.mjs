// Reads a JSONC file (argv[2]) as VS Code reads its mcp.json, with
// jsonc-parser: comments and trailing commas allowed. Prints the value as
// JSON on stdout and exits 0, or prints each error with its offset and
// exits 1.
import { readFileSync } from "node:fs";
import { parse, printParseErrorCode } from "jsonc-parser";

const text = readFileSync(process.argv[2], "utf8");
const errors = [];
const value = parse(text, errors, { allowTrailingComma: true, disallowComments: false });
if (errors.length > 0) {
  for (const e of errors) console.error(`${printParseErrorCode(e.error)} at offset ${e.offset}`);
  process.exit(1);
}
process.stdout.write(JSON.stringify(value));
