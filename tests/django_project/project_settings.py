"""A small Django project using jobtable's task backend on the database the test names
(``DJANGO_TEST_DATABASE``: a SQLite path, or a ``postgresql://`` URL whose options set a
search_path)."""

import os
import urllib.parse

SECRET_KEY = "tests-only"
USE_TZ = True
INSTALLED_APPS = ["django.contrib.contenttypes", "shop", "jobtable.contrib.django"]
DEFAULT_AUTO_FIELD = "django.db.models.AutoField"

_database = os.environ["DJANGO_TEST_DATABASE"]
if _database.startswith("postgresql://"):
    _url = urllib.parse.urlsplit(_database)
    _query = dict(urllib.parse.parse_qsl(_url.query))
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": _url.path.lstrip("/"),
            "USER": _url.username or "",
            "HOST": _url.hostname or "",
            "PORT": _url.port or "",
            # Django's documented spelling, with a space: "-c search_path=..."
            "OPTIONS": {"options": _query["options"].replace("-c", "-c ", 1)}
            if "options" in _query
            else {},
        }
    }
else:
    DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": _database}}

TASKS = {
    "default": {
        "BACKEND": "jobtable.contrib.django.JobtableBackend",
        "QUEUES": ["default", "mail"],
    }
}
LOGGING = {
    "version": 1,
    "handlers": {"stderr": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["stderr"], "level": "INFO"},
}
