from django.apps import AppConfig


class PipelineConfig(AppConfig):
    name = "apps.pipeline"
    label = "pipeline"

    def ready(self) -> None:
        from apps.pipeline import jobs  # noqa: F401 - registers periodic jobs
        from apps.pipeline.services import user_creation_points_pay
        from apps.users.services import USER_CREATED_HOOKS

        # An identification that creates a user pays its user_creation points (the users app
        # sits below points and calls this back).
        if user_creation_points_pay not in USER_CREATED_HOOKS:
            USER_CREATED_HOOKS.append(user_creation_points_pay)
