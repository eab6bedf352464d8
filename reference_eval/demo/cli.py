"""``cogbench demo``: ``tiny-model`` (a random-weight LLaVA to run ``eval`` on) and ``server`` (a stand-in
OpenAI-compatible judge or model): trying the whole path on a CPU, offline, with the installed package alone.

The code each command runs is imported when it runs (``tiny-model`` needs the eval extra; ``server`` only
the standard library).
"""

from __future__ import annotations

import argparse
import functools

from cogbench.option_types import port_number

TOKENIZER = "Qwen/Qwen2.5-VL-7B-Instruct"  # demo.tiny_model.TOKENIZER (checked by tests/test_demo.py)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "demo",
        help="stand-ins for trying cogbench offline: a tiny random-weight model and a local OpenAI-compatible server",
        description="Stand-ins that show the whole path on a CPU with no real model or judge (docs/running.md, "
        '"Trying it offline"): `tiny-model` writes a random-weight LLaVA for `eval --model hf:FOLDER`, `server` '
        "answers every chat completion with one text, as a judge (`--judge openai:NAME --judge-base-url URL`) or "
        "a model (`--model openai:NAME --base-url URL`). Their answers are noise or constant: they show the "
        "path, not a model's or a judge's quality.",
    )
    commands = parser.add_subparsers(
        dest="demo_command",
        required=True,
        metavar="SUBCOMMAND",
        help="tiny-model or server",
        parser_class=functools.partial(argparse.ArgumentParser, epilog=parser.epilog),  # the exit codes
    )
    tiny = commands.add_parser(
        "tiny-model",
        help="write a random-weight LLaVA (CLIP + Qwen2, 50 MB) with Qwen2.5-VL's tokenizer and chat template",
        description="Write a random-weight LLaVA (CLIP vision tower + Qwen2 text model, about 50 MB) and its "
        "processor into OUT, to evaluate with eval's `--model hf:OUT --device cpu`. Its tokenizer and chat template "
        "are Qwen2.5-VL's, read from --tokenizer: a folder holding them, or a Hub repo (only the tokenizer "
        "files are downloaded, a few MB; then everything runs offline). Needs the eval extra.",
    )
    tiny.add_argument("out", metavar="OUT", help="the model folder (new, empty, or one this command wrote)")
    tiny.add_argument(
        "--tokenizer",
        default=TOKENIZER,
        metavar="DIR_OR_HUB_ID",
        help="where Qwen2.5-VL's tokenizer and chat template are: a folder, or a Hub repo (default: %(default)s)",
    )
    tiny.add_argument("--seed", type=int, default=0, help="seed of the random weights (default: %(default)s)")
    tiny.set_defaults(func=run_tiny_model)
    server = commands.add_parser(
        "server",
        help="serve a stand-in OpenAI-compatible judge or model on 127.0.0.1, answering one text, until Ctrl-C",
        description="Serve POST /v1/chat/completions on 127.0.0.1, answering every request with --reply, until "
        "interrupted (Ctrl-C, or `kill`). Prints `serving URL` once it listens; --url-file gets the URL too, so "
        "a script waits for that file, then gives the URL as --judge-base-url or --base-url (any model name and "
        "any API key are accepted). Standard library only: runs on the core install.",
    )
    server.add_argument("--reply", default="right", help="the text of every completion (default: %(default)s)")
    server.add_argument("--port", type=port_number, default=0, help="port on 127.0.0.1 (default: 0, a free one)")
    server.add_argument("--url-file", metavar="FILE", help="write the base URL there once serving")
    server.set_defaults(func=run_server)


def run_tiny_model(args: argparse.Namespace) -> int:
    from pathlib import Path

    from cogbench.dataset_builders.output import claim_output
    from cogbench.reference_eval.demo.tiny_model import MODEL_FILES, tokenizer_and_chat_template, write_tiny_llava

    out = Path(args.out)
    claim_output(out, "demo tiny-model", MODEL_FILES, create=False)  # refused before anything is loaded
    tokenizer, template = tokenizer_and_chat_template(args.tokenizer)  # a tokenizer not found leaves no folder
    claim_output(out, "demo tiny-model", MODEL_FILES)
    write_tiny_llava(out, tokenizer, template, args.seed)
    print(f"wrote {out}: a random-weight LLaVA (its answers are noise); evaluate it with --model hf:{out}")
    return 0


def run_server(args: argparse.Namespace) -> int:
    from cogbench.reference_eval.demo.stand_in_server import serve

    serve(args.reply, args.port, args.url_file)
    return 0
