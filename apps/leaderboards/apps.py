from django.apps import AppConfig


class LeaderboardsConfig(AppConfig):
    name = "apps.leaderboards"
    label = "leaderboards"

    def ready(self) -> None:
        from apps.leaderboards import (  # noqa: F401 - registers periodic jobs, guard rails
            guards,  # and the streak boards' followers of streaks (services)
            jobs,
            portable,
            services,
        )
