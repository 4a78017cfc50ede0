from django.apps import AppConfig


class PipelineConfig(AppConfig):
    name = "apps.pipeline"
    label = "pipeline"

    def ready(self) -> None:
        from apps.pipeline import jobs  # noqa: F401 - registers periodic jobs
