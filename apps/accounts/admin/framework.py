"""The framework's own pages (staff accounts, permission groups, django-axes' login records) in
the dashboard's theme: Django and django-axes register them with the plain admin's classes, so
they are registered again here with django-unfold's, keeping each one's columns, filters and
forms. gamify/dashboard.py lists groups and the axes records under "System"."""

from axes.admin import AccessAttemptAdmin, AccessFailureLogAdmin, AccessLogAdmin
from axes.models import AccessAttempt, AccessFailureLog, AccessLog
from django.contrib import admin
from django.contrib.auth.admin import GroupAdmin, UserAdmin
from django.contrib.auth.models import Group, User
from unfold.admin import ModelAdmin
from unfold.forms import AdminPasswordChangeForm, UserChangeForm, UserCreationForm


class StaffUserAdmin(UserAdmin, ModelAdmin):
    form = UserChangeForm
    add_form = UserCreationForm
    change_password_form = AdminPasswordChangeForm


class ThemedGroupAdmin(GroupAdmin, ModelAdmin):
    pass


class ThemedAccessAttemptAdmin(AccessAttemptAdmin, ModelAdmin):
    pass


class ThemedAccessLogAdmin(AccessLogAdmin, ModelAdmin):
    pass


class ThemedAccessFailureLogAdmin(AccessFailureLogAdmin, ModelAdmin):
    pass


for model, model_admin in (
    (User, StaffUserAdmin),
    (Group, ThemedGroupAdmin),
    (AccessAttempt, ThemedAccessAttemptAdmin),
    (AccessLog, ThemedAccessLogAdmin),
    (AccessFailureLog, ThemedAccessFailureLogAdmin),
):
    # django-axes registers its pages only when AXES_ENABLE_ADMIN is on (the default).
    if admin.site.is_registered(model):
        admin.site.unregister(model)
        admin.site.register(model, model_admin)
