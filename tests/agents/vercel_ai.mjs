// The Vercel AI SDK's tool loops against toolbridge (tests/agents/test_vercel_ai.py runs it):
// generateText and streamText, each with @ai-sdk/openai's Responses model (store: true by
// default, so step 2 names step 1's output by item_reference) and with @ai-sdk/anthropic.
// Usage: node vercel_ai.mjs GATEWAY_URL KEY. Prints one JSON line per loop: its final text,
// its steps, the tool results, the requests' item references, and the error if it failed.
import { generateText, stepCountIs, streamText, tool } from "ai";
import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAI } from "@ai-sdk/openai";
import { z } from "zod";

const [url, key] = process.argv.slice(2);
const code = Math.random().toString(36).slice(2, 10); // only the tool knows it
const sent = []; // every request body the SDKs sent

async function recording(input, init) {
  if (init && typeof init.body === "string") sent.push(JSON.parse(init.body));
  return fetch(input, init);
}

const openai = createOpenAI({ baseURL: `${url}/v1`, apiKey: key, fetch: recording });
const anthropic = createAnthropic({ baseURL: `${url}/v1`, apiKey: key, fetch: recording });
const tools = {
  get_weather: tool({
    description: "The weather in a city.",
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => `${city}: sunny, 22 degrees (report ${code})`,
  }),
};
const prompt = "What is the weather in Paris?";

function references(from) {
  return sent.slice(from).flatMap((body) => (Array.isArray(body.input) ? body.input : []))
    .filter((item) => item.type === "item_reference").length;
}

async function loop(name, model, streamed) {
  const from = sent.length;
  const errors = [];
  const out = { name, code };
  try {
    const options = { model, tools, prompt, stopWhen: stepCountIs(3), maxRetries: 0, maxOutputTokens: 1024 };
    let steps, text;
    if (streamed) {
      const result = streamText({ ...options, onError: ({ error }) => errors.push(String(error)) });
      text = await result.text;
      steps = await result.steps;
    } else {
      const result = await generateText(options);
      text = result.text;
      steps = result.steps;
    }
    out.text = text;
    out.steps = steps.length;
    out.results = steps.flatMap((s) => s.toolResults.map((r) => r.output));
  } catch (error) {
    errors.push(String(error));
  }
  out.references = references(from);
  out.requests = sent.length - from;
  if (errors.length) out.error = errors.join("; ");
  console.log(JSON.stringify(out));
}

await loop("openai.responses generateText", openai.responses("m"), false);
await loop("openai.responses streamText", openai.responses("m"), true);
await loop("anthropic generateText", anthropic("m"), false);
await loop("anthropic streamText", anthropic("m"), true);
