"""CELL_DATABASE_URLS and its companions, read as the settings module reads them."""

import json

from tests.settings_process import settings_run

SHOW = (
    "import json, gamify.settings as s;"
    " print(json.dumps({'databases': {k: [v['ENGINE'], v['NAME'], v.get('TEST', {}).get('MIRROR')]"
    " for k, v in s.DATABASES.items()}, 'cells': s.CELL_DATABASES,"
    " 'queues': [q.name for q in s.CELERY_TASK_QUEUES], 'routers': s.DATABASE_ROUTERS}))"
)


def test_each_cell_is_an_alias_and_control_is_the_default_cells_database() -> None:
    result = settings_run(
        SHOW,
        DATABASE_URL="postgres://u@db1:5432/gamify",
        CELL_DATABASE_URLS="cell2=postgres://u@db2:5432/gamify, cell3=postgres://u@db3/g3",
    )
    shown = json.loads(result.stdout)
    assert shown["databases"] == {
        "default": ["django.db.backends.postgresql", "gamify", None],
        "cell2": ["django.db.backends.postgresql", "gamify", None],
        "cell3": ["django.db.backends.postgresql", "g3", None],
        "control": ["django.db.backends.postgresql", "gamify", "default"],
    }
    assert list(shown["cells"]) == ["cell2", "cell3"]
    assert shown["routers"][0] == "apps.cells.routers.ControlRouter"
    assert shown["queues"] == ["celery", "notifications", "notifications-bulk", "webhooks"]


def test_per_cell_queues_are_declared_when_asked() -> None:
    result = settings_run(
        SHOW,
        DATABASE_URL="postgres://u@db1:5432/gamify",
        CELL_DATABASE_URLS="cell2=postgres://u@db2:5432/gamify",
        CELERY_QUEUES_PER_CELL="true",
    )
    assert json.loads(result.stdout)["queues"][4:] == [
        "celery.cell2",
        "notifications.cell2",
        "notifications-bulk.cell2",
        "webhooks.cell2",
    ]


def test_a_malformed_cell_is_refused_at_startup() -> None:
    for bad in ("postgres://u@db2/g", "default=postgres://u@db2/g", "control=x://y", "2x=p://q"):
        result = settings_run(SHOW, CELL_DATABASE_URLS=bad)
        assert result.returncode != 0, bad
        assert "CELL_DATABASE_URLS" in result.stderr
