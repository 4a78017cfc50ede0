from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("notifications", "0005_league_types"),
    ]

    operations = [
        migrations.AddField(
            model_name="emailtemplate",
            name="mode",
            field=models.CharField(
                choices=[("advanced", "Advanced (Jinja2)"), ("blocks", "Blocks")],
                default="advanced",
                max_length=16,
            ),
        ),
        migrations.AddField(
            model_name="emailtemplate",
            name="blocks",
            field=models.JSONField(blank=True, null=True),
        ),
    ]
