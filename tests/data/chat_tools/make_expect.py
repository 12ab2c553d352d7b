"""Writes chat_tools_expect.json: chat prompts with tools, tool calls and tool results,
rendered by jinja2 from Qwen2.5-Instruct's, Qwen3's and Llama 3.2 Instruct's chat
templates (../) the way
transformers' apply_chat_template renders them (its tojson filter, trim_blocks and
lstrip_blocks). tests/models/chat_tools_test.cc renders the same prompts natively.

Run from the repository root: python3 tests/data/chat_tools/make_expect.py
"""
import json

from jinja2.sandbox import ImmutableSandboxedEnvironment


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
env.filters["tojson"] = tojson

TEMPLATES = {
    "qwen2.5": "tests/data/qwen2.5_chat_template.jinja",
    "qwen3": "tests/data/qwen3_chat_template.jinja",
    "llama3.2": "tests/data/llama3.2_chat_template.jinja",
}
# Llama's template dates its system header; the test pins the same date.
LLAMA_DATE = "05 Mar 2026"

WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "Weather in a city, °C",
    "parameters": {"type": "object", "properties": {
        "city": {"type": "string"},
        "days": {"type": "integer", "minimum": 1.0, "maximum": 1e-05}}, "required": ["city"]}}}
ADD = {"name": "add", "parameters": {"b": {"type": "number"}, "a": {"type": "number"}}}

QWEN_PROMPTS = [
    # Tools, no system message: Qwen2.5 falls back to its default one, Qwen3 to none.
    ({"messages": [{"role": "user", "content": "Weather in Paris?"}], "tools": [WEATHER, ADD]}, True),
    ({"messages": [{"role": "system", "content": "Be brief."},
                   {"role": "user", "content": "Weather in Paris?"}], "tools": [WEATHER]}, True),
    # A whole exchange: a call without content, two results in one user turn, the answer.
    ({"messages": [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris", "days": 2}}}]},
        {"role": "tool", "content": "{\"temp\": 21}"},
        {"role": "tool", "content": "sunny"},
        {"role": "assistant", "content": "21 °C and sunny."}], "tools": [WEATHER]}, False),
    # Content before the calls; arguments as JSON text (OpenAI's form) and unwrapped calls.
    ({"messages": [
        {"role": "user", "content": "2+3?"},
        {"role": "assistant", "content": "Let me add.", "tool_calls": [
            {"name": "add", "arguments": "{\"a\": 2, \"b\": 3}"},
            {"function": {"name": "add", "arguments": {"b": 1, "a": 0}}}]},
        {"role": "tool", "content": "5"}]}, True),
    # Qwen3's reasoning around calls: kept after the last user query.
    ({"messages": [
        {"role": "user", "content": "2+3?"},
        {"role": "assistant", "content": "<think>\nuse the tool\n</think>\n\n",
         "tool_calls": [{"name": "add", "arguments": {"a": 2, "b": 3}}]},
        {"role": "tool", "content": "5"},
        {"role": "assistant", "content": "<think>\ngot 5\n</think>\n\nIt is 5."}], "tools": [ADD]}, False),
]

# Llama 3.1+ writes one call a message, the schemas into the first user message, and
# results JSON-quoted.
LLAMA_PROMPTS = [
    ({"messages": [{"role": "user", "content": " Weather in Paris? "}], "tools": [WEATHER, ADD]}, True),
    ({"messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris", "days": 2}}}]},
        {"role": "tool", "content": "{\"temp\": 21}"},
        {"role": "assistant", "content": "21 °C."},
        {"role": "user", "content": "And Rome?"}], "tools": [WEATHER]}, True),
    ({"messages": [
        {"role": "user", "content": "2+3?"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"type": "function", "function": {"name": "add", "arguments": "{\"a\": 2, \"b\": 3}"}}]},
        {"role": "tool", "content": "5"}]}, False),
]

cases = []
for name, path in TEMPLATES.items():
    with open(path) as f:
        template = env.from_string(f.read())
    for prompt, add_generation_prompt in LLAMA_PROMPTS if name.startswith("llama") else QWEN_PROMPTS:
        rendered = template.render(messages=prompt["messages"], tools=prompt.get("tools"),
                                   add_generation_prompt=add_generation_prompt, bos_token="<|begin_of_text|>",
                                   date_string=LLAMA_DATE)
        cases.append({"template": name, "prompt": prompt, "add_generation_prompt": add_generation_prompt,
                      "rendered": rendered})
with open("tests/data/chat_tools/chat_tools_expect.json", "w") as f:
    json.dump({"cases": cases}, f, ensure_ascii=False, indent=1)
    f.write("\n")
