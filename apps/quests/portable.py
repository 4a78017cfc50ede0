"""Quests and quest pools as portable configuration (apps/core/portable.py)."""

from apps.core.portable import CollectionKind, register
from apps.quests.models import Quest, QuestPool
from apps.quests.views import QuestCollection, QuestPoolCollection

register(
    CollectionKind(
        "quest", "quest", 75, QuestCollection(), model=Quest, archived={"status": "archived"}
    )
)
register(
    CollectionKind(
        "quest_pool",
        "quest pool",
        76,
        QuestPoolCollection(),
        model=QuestPool,
        archived={"status": "inactive"},
    )
)
