from django.apps import AppConfig


class CellsConfig(AppConfig):
    name = "apps.cells"
    label = "cells"
    verbose_name = "Cells"

    def ready(self) -> None:
        from apps.cells import tasks
        from apps.core.cells import cell_connections_install

        cell_connections_install()
        tasks.signals_connect()
