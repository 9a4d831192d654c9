// Validates what toolbridge answered to the runner's own cases (tests/openresponses_run.py:
// EXTRA) against the suite's schemas: each whole response against the response schema, each
// streamed event against the suite's union of event schemas. Reads a JSON array of
// {case, kind: "response" | "event", data}; prints a JSON array of {case, kind, type, issues}.
import { responseResourceSchema } from "./suite/src/generated/kubb/zod/responseResourceSchema";
import { parseStreamingEventData } from "./suite/src/lib/sse-parser";

const objects = JSON.parse(await Bun.file(process.argv[2]).text());
const failures = [];
for (const o of objects) {
  const result = o.kind === "response"
    ? responseResourceSchema.safeParse(o.data)
    : parseStreamingEventData(o.data).validationResult;
  if (!result.success) {
    const issues = result.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`);
    failures.push({ case: o.case, kind: o.kind, type: o.data?.type ?? o.data?.status, issues });
  }
}
console.log(JSON.stringify(failures));
