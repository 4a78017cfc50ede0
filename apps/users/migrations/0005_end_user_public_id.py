import uuid

from django.db import migrations, models, transaction

BATCH = 10_000


def fill(apps, schema_editor):
    """Give every user without one a random public id, BATCH rows per committed statement, so
    that no statement holds a large table's rows (or its lock) for long while events go on.
    PostgreSQL (13 or later) draws them with gen_random_uuid(); elsewhere (SQLite, small
    databases) Python does."""
    connection = schema_editor.connection
    if connection.vendor == "postgresql":
        while True:
            with transaction.atomic(using=connection.alias), connection.cursor() as cursor:
                cursor.execute(
                    "UPDATE users_enduser SET public_id = gen_random_uuid() WHERE id IN ("
                    "SELECT id FROM users_enduser WHERE public_id IS NULL LIMIT %s)",
                    [BATCH],
                )
                if cursor.rowcount == 0:
                    return
    EndUser = apps.get_model("users", "EndUser")
    while True:
        with transaction.atomic(using=connection.alias):
            batch = list(EndUser.objects.filter(public_id__isnull=True).only("pk")[:BATCH])
            if not batch:
                return
            for user in batch:
                user.public_id = uuid.uuid4()
            EndUser.objects.bulk_update(batch, ["public_id"])


def _fields(apps):
    EndUser = apps.get_model("users", "EndUser")
    nullable = EndUser._meta.get_field("public_id")
    required = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    required.set_attributes_from_name("public_id")
    required.model = EndUser
    return EndUser, nullable, required


def require(apps, schema_editor):
    """Unique and required, without blocking writes on PostgreSQL: the rows that web workers
    still on the previous release created meanwhile are filled, the unique index is built
    CONCURRENTLY and then becomes the constraint, and NOT NULL is proved by a CHECK validated
    under a lock that lets writes through (PostgreSQL then sets NOT NULL without a scan). The
    column also gets gen_random_uuid() as its database default, so that a worker still running
    the previous release, whose INSERT names no public_id, keeps creating users until it is
    restarted (the application always sets the value itself). Elsewhere, Django alters it."""
    fill(apps, schema_editor)
    if schema_editor.connection.vendor != "postgresql":
        EndUser, nullable, required = _fields(apps)
        with transaction.atomic(using=schema_editor.connection.alias):
            schema_editor.alter_field(EndUser, nullable, required)
        return
    for statement in (
        "ALTER TABLE users_enduser ALTER COLUMN public_id SET DEFAULT gen_random_uuid()",
        "CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS users_enduser_public_id_uniq "
        "ON users_enduser (public_id)",
        "ALTER TABLE users_enduser ADD CONSTRAINT users_enduser_public_id_key "
        "UNIQUE USING INDEX users_enduser_public_id_uniq",
        "ALTER TABLE users_enduser ADD CONSTRAINT users_enduser_public_id_present "
        "CHECK (public_id IS NOT NULL) NOT VALID",
        "ALTER TABLE users_enduser VALIDATE CONSTRAINT users_enduser_public_id_present",
        "ALTER TABLE users_enduser ALTER COLUMN public_id SET NOT NULL",
        "ALTER TABLE users_enduser DROP CONSTRAINT users_enduser_public_id_present",
    ):
        schema_editor.execute(statement)


def unrequire(apps, schema_editor):
    """Back to nullable and not unique, so that the column can then be dropped."""
    if schema_editor.connection.vendor != "postgresql":
        EndUser, nullable, required = _fields(apps)
        with transaction.atomic(using=schema_editor.connection.alias):
            schema_editor.alter_field(EndUser, required, nullable)
        return
    schema_editor.execute(
        "ALTER TABLE users_enduser DROP CONSTRAINT users_enduser_public_id_key, "
        "ALTER COLUMN public_id DROP NOT NULL, ALTER COLUMN public_id DROP DEFAULT"
    )


class Migration(migrations.Migration):
    """The users' public ids, which links in emails carry instead of primary keys: added
    nullable (no rewrite of the table), filled for existing rows in committed batches, then made
    unique and required without a long lock (`require`). Not atomic, so that each batch commits
    and the index can be built concurrently."""

    atomic = False

    dependencies = [
        ("users", "0004_analytics_indexes"),
    ]

    operations = [
        migrations.AddField(
            model_name="enduser",
            name="public_id",
            field=models.UUIDField(null=True, editable=False),
        ),
        migrations.RunPython(fill, migrations.RunPython.noop, atomic=False),
        migrations.SeparateDatabaseAndState(
            database_operations=[
                migrations.RunPython(require, unrequire, atomic=False)
            ],
            state_operations=[
                migrations.AlterField(
                    model_name="enduser",
                    name="public_id",
                    field=models.UUIDField(default=uuid.uuid4, unique=True, editable=False),
                ),
            ],
        ),
    ]
