import uuid

from django.db import migrations, models


def fill(apps, schema_editor):
    """Give every existing user a random public id, in one statement on PostgreSQL (13 or later
    has gen_random_uuid built in) so that a large table is not updated row by row from Python;
    elsewhere (SQLite, small databases) per row, in batches."""
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            "UPDATE users_enduser SET public_id = gen_random_uuid() WHERE public_id IS NULL"
        )
        return
    EndUser = apps.get_model("users", "EndUser")
    while True:
        batch = list(EndUser.objects.filter(public_id__isnull=True).only("pk")[:1000])
        if not batch:
            return
        for user in batch:
            user.public_id = uuid.uuid4()
        EndUser.objects.bulk_update(batch, ["public_id"])


class Migration(migrations.Migration):
    """The users' public ids, which links in emails carry instead of primary keys: added
    nullable, filled for existing rows, then made unique and required (adding it with a default
    in one step would give every existing row the same value)."""

    dependencies = [
        ("users", "0004_analytics_indexes"),
    ]

    operations = [
        migrations.AddField(
            model_name="enduser",
            name="public_id",
            field=models.UUIDField(null=True, editable=False),
        ),
        migrations.RunPython(fill, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="enduser",
            name="public_id",
            field=models.UUIDField(default=uuid.uuid4, unique=True, editable=False),
        ),
    ]
