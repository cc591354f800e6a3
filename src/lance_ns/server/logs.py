"""Logging of the server (and of every ``lance_ns`` record while it runs): text or
JSON lines, secrets redacted, and the start-up line naming the HTTP stack."""

from __future__ import annotations

import json
import logging
import sys
import time

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s %(message)s"


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message (and the traceback, if any)."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S") + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            entry["exception"] = record.exc_text
        return json.dumps(entry, ensure_ascii=False)


JsonFormatter.converter = time.gmtime


def configure_logging(level: str, log_format: str = "text") -> None:
    """Send ``lance_ns`` records at ``level`` to stderr (as text lines or JSON objects),
    unless the host program has set logging up."""
    logger = logging.getLogger("lance_ns")
    logger.setLevel(level.upper())
    if not logger.handlers and not logging.getLogger().handlers:
        from ..redact import RedactingFilter

        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(JsonFormatter() if log_format == "json" else logging.Formatter(LOG_FORMAT))
        handler.addFilter(RedactingFilter())  # every lance_ns record, not only the server's
        logger.addHandler(handler)
        if log_format == "json":  # uvicorn's own lines (startup, shutdown, errors) as JSON too
            server_logger = logging.getLogger("uvicorn")
            server_logger.setLevel(level.upper())
            server_logger.addHandler(handler)
            server_logger.propagate = False


def http_stack(loop: str = "auto", http: str = "auto") -> tuple[str, str]:
    """(event loop, HTTP parser) uvicorn runs on with these settings: ``auto`` is
    uvloop and httptools where they are installed, else asyncio and h11 (uvicorn's rule)."""
    import importlib.util

    def found(module: str) -> bool:
        try:
            return importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):  # a module set to None in sys.modules: absent
            return False

    if loop == "auto":
        loop = "uvloop" if found("uvloop") else "asyncio"
    if http == "auto":
        http = "httptools" if found("httptools") else "h11"
    return loop, http


def log_http_stack(uvicorn_options: dict) -> None:
    """The start-up line naming the event loop and HTTP parser the server runs on."""
    import uvicorn

    asked = (uvicorn_options.get("loop", "auto"), uvicorn_options.get("http", "auto"))
    loop, http = http_stack(*asked)
    fell_back = asked == ("auto", "auto") and (loop, http) != ("uvloop", "httptools")  # not installed here
    slow = " (the fast stack is uvloop + httptools: pip install 'lance-ns[server]')" if fell_back else ""
    logging.getLogger("lance_ns.server").info("uvicorn %s on the %s event loop with the %s HTTP parser%s",
                                              uvicorn.__version__, loop, http, slow)
