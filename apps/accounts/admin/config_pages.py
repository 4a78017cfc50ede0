"""Configuration pages as plain form views on the dashboard's site (docs/architecture.md §10).

A resource's `ModelAdmin` keeps the read-mostly list; its add, change and delete pages, and any
page of its own (actions), are the plain views of `ConfigAdmin`, routed from `get_urls` at the
admin's own URLs and names and wrapped by `admin_site.admin_view` (login, no-store), so the site
stays the shell: navigation, the tenant switcher, messages, history. A page's form is a
`ConfigForm`, a plain `forms.Form` whose fields are the service's keyword arguments; a valid POST
calls the service once, in a transaction, through the page's `create`, `update` or `remove`;
an `ApplicationError` it raises is shown on the form, next to the input it names, with the input
kept. Objects are looked up in the tenant selected in the header only: another's id is a 404.
"""

from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.contrib.admin.utils import (
    construct_change_message,
    display_for_field,
    display_for_value,
    label_for_field,
    lookup_field,
    unquote,
)
from django.core.exceptions import PermissionDenied
from django.db import models, transaction
from django.db.models import QuerySet
from django.forms.utils import pretty_name
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html
from django.utils.text import capfirst

from apps.accounts.admin.base import DashboardAdmin, admin_link
from apps.accounts.admin.dependents import dependents
from apps.accounts.models import Tenant
from apps.accounts.staff import selected_tenant
from apps.core.api.fields import control_characters_error
from apps.core.declarations import settings_of
from apps.core.errors import ApplicationError
from apps.core.guards import Impact
from apps.core.shown_time import moment_shown

View = Callable[..., HttpResponse]
# A section of a form page: its heading (None: none) and its rows, each the name of a form field
# or of something shown read-only (a model field, or a method or attribute of the page; see
# form_sections), or a tuple of such names shown side by side on one line.
Section = tuple[str | None, Sequence[str | tuple[str, ...]]]


class ConfigForm(forms.Form):
    """A configuration form: its fields are the keyword arguments of the service the page calls.

    `tenant` is the tenant the page writes into, `instance` the stored object (None when adding);
    `initial_from` gives the inputs of a stored object. `clean` may call the domain's own checks;
    the service checks the rest and `refuse` shows its refusal."""

    required_css_class = "required"
    # Inputs of free text (descriptions, templates) that may hold line breaks and tabs.
    free_text: ClassVar[tuple[str, ...]] = ()
    # Whether the form writes into the selected tenant; organizations and environments do not.
    tenant_required: ClassVar[bool] = True
    # The resource's declaration (apps/core/declarations.py), for forms made by declared_form.
    declaration: ClassVar[Any] = None

    def __init__(
        self, *args: Any, tenant: Tenant | None, instance: Any = None, **kwargs: Any
    ) -> None:
        self.tenant, self.instance = tenant, instance
        if instance is not None:
            kwargs["initial"] = {**self.initial_from(instance), **kwargs.get("initial", {})}
        super().__init__(*args, **kwargs)
        for name, field in self.fields.items():  # the history's "Changed …" names the labels
            field.label = field.label or pretty_name(name)

    def initial_from(self, obj: Any) -> dict[str, Any]:
        """The inputs of a stored object: by default the declared settings it has under the
        same names (None as an empty input), never a secret."""
        if self.declaration is None:
            return {}
        settings = settings_of(self.declaration)
        names = [n for n, s in settings.items() if n in self.base_fields and not s.secret]
        return {n: _input(getattr(obj, n)) for n in names if hasattr(obj, n)}

    def declared_values(self, *, changed_only: bool = False) -> dict[str, Any]:
        """The valid inputs of the declared settings, by Python name: an empty input is None
        where None clears the setting, else "" for a text that may be blank, and otherwise not
        given (a new object takes its default, a stored one keeps its value). With
        `changed_only`, a stored object's inputs that staff changed only."""
        values: dict[str, Any] = {}
        for name, setting in settings_of(self.declaration).items():
            if name not in self.fields or name not in self.cleaned_data:
                continue
            if changed_only and self.instance is not None and name not in self.changed_data:
                continue
            value = self.cleaned_data[name]
            if value in ("", None) and not (value == "" and setting.blank and not setting.nullable):
                if not setting.nullable:
                    continue
                value = None
            values[name] = value
        return values

    def declared_settings(self, *, changed_only: bool = False, **own: Any) -> Any:
        """The declaration the service is given: the declared inputs (`declared_values`) and
        the values of the page's own inputs (`own`, by Python name)."""
        return self.declaration(**self.declared_values(changed_only=changed_only), **own)

    def changes(self) -> dict[str, Any]:
        """The inputs that differ from the stored object: what an update passes."""
        return {name: self.cleaned_data[name] for name in self.changed_data}

    @property
    def valid_tenant(self) -> Tenant:
        """The tenant of a valid form: `clean` refuses a form without one."""
        assert self.tenant is not None  # noqa: S101 - see clean
        return self.tenant

    def clean(self) -> dict[str, Any]:
        super().clean()
        cleaned = self.cleaned_data
        if self.tenant is None and self.tenant_required:
            raise forms.ValidationError("Select a tenant in the header first.")
        # The API's rule for display strings: no control characters.
        for name, value in list(cleaned.items()):  # add_error removes the entry
            if isinstance(value, str):
                problem = control_characters_error(name, value, name in self.free_text)
                if problem is not None:
                    self.add_error(name, f"This field {problem}.")
        return cleaned

    def refuse(self, exc: ApplicationError) -> None:
        """A service's refusal (apps/core/errors.py), next to the input of the one field it
        names, else above the form, with the fields it names written as their labels. Next to
        its input, a message that opens with that input's name ("{html}: line 1: ...",
        "{data}.screen: ...") drops it."""
        field = exc.fields[0] if len(exc.fields) == 1 else None
        message = exc.worded(self._label)
        if field is not None and field in self.fields:
            rest = exc.template.removeprefix("{" + field + "}")
            after = message[len(self._label(field)) :]
            if rest.startswith(": "):
                message = after[2:3].upper() + after[3:]
            elif rest.startswith("."):
                message = after[1:]
        self.add_error(field if field in self.fields else None, message)

    def _label(self, name: str) -> str:
        field = self.fields.get(name)
        return f"“{field.label}”" if field is not None and field.label else name


def _input(value: Any) -> Any:
    return "" if value is None else value


class Heading(str):
    """A section's heading that carries what Django's fieldsets may also have: a description
    shown above its rows (HTML) and CSS classes of its fieldset ("collapse": folded)."""

    description: str
    classes: str

    def __new__(cls, text: str, *, description: str = "", classes: str = "") -> "Heading":
        heading = super().__new__(cls, text)
        heading.description, heading.classes = description, classes
        return heading


class ReadOnlyRow:
    """A row of a form page that shows a value; template rows test `row.field` to tell."""

    field = None

    def __init__(self, name: str, label: str, value: Any) -> None:
        self.name, self.label, self.value = name, label, value


class Line:
    """Rows of a form page shown side by side; template rows test `row.rows` to tell."""

    def __init__(self, rows: list[Any]) -> None:
        self.rows = rows


class ConfigAdmin(DashboardAdmin):
    """A resource's dashboard pages: Django's list, and plain views for the rest.

    Pages declare `config_form`, `form_sections` and the service calls `create`, `update` and
    `remove`; `object_views` adds pages of their own under the object's address."""

    config_form: type[ConfigForm]
    actions: Any = ["delete_selected"]

    # --- what a page declares ------------------------------------------------------------------

    def create(self, request: HttpRequest, form: Any) -> models.Model:
        raise NotImplementedError

    def update(self, request: HttpRequest, obj: Any, form: Any) -> None:
        raise NotImplementedError

    def remove(self, request: HttpRequest, obj: Any) -> None:
        raise NotImplementedError

    def object_views(self) -> dict[str, View]:
        """Pages of the object besides its form and delete pages: name -> view(request, id),
        at <id>/<name with dashes>/, named admin:<app>_<model>_<name>."""
        return {}

    def form_sections(self, obj: Any) -> Sequence[Section]:
        """The form page's sections (obj is None when adding); by default every input."""
        return [(None, list(self.config_form.base_fields))]

    def form_kwargs(self, request: HttpRequest, obj: Any) -> dict[str, Any]:
        """The form's owner and object: by default the tenant selected in the header (a page
        whose objects belong to something else, such as a points system, adds it here)."""
        return {"tenant": selected_tenant(request), "instance": obj}

    def page_context(self, request: HttpRequest, obj: Any) -> dict[str, Any]:
        """What the form page shows besides the form (obj is None when adding)."""
        return {}

    def get_form_template(self) -> list[str]:
        """The form page's template: the resource's own if it has one (extending the shared
        one), else the shared one."""
        opts = self.opts
        return [f"admin/{opts.app_label}/{opts.model_name}/form.html", "admin/config/form.html"]

    def confirmation(self, request: HttpRequest, obj: Any, form: Any) -> HttpResponse | None:
        """A page asking staff to confirm a valid posted input before it is saved (its form
        posts the input again, with what tells this method it was confirmed), or None to save
        it now. By default none; streak settings confirm a change of frequency."""
        return None

    def after_add_url(self, obj: Any) -> str | None:
        """Where staff go once `obj` is added, or None for where Django's admin sends them."""
        return None

    def deletion_counts(self, objs: list[Any]) -> dict[str, int]:
        """Rows that go or change with `objs`, per kind, for the confirmation page."""
        return {f"{d.label} ({d.effect})": d.count for d in dependents(objs)}

    def deletion_listed(self, objs: list[Any]) -> list[Any]:
        """Rows the confirmation page lists besides `objs` and their named dependents."""
        return []

    def deletion_protected(self, objs: list[Any]) -> list[Any]:
        """What keeps `objs` from going (the service refuses), listed by the confirmation page
        in place of its button."""
        return []

    def deletion_impact(self, obj: Any) -> Impact | None:
        """What deleting `obj` takes from users and what forbids it, from the app's selector
        (apps/core/guards.py), or None for a resource without guard rails. The confirmation
        says the losses, asks for the key when users lose data and lists the blockers in place
        of its button; the page's `remove` hands the typed key (`typed_key`) to the service,
        which decides."""
        return None

    def deletion_alternative(self, obj: Any) -> str:
        """What staff may do instead of deleting `obj` (HTML), shown with its losses."""
        return ""

    def typed_key(self, request: HttpRequest, obj: Any) -> str:
        """The key staff typed on the confirmation to delete `obj` ("" if none)."""
        return request.POST.get(f"confirm-{obj.pk}", "").strip()

    def _guards(self, objs: list[Any]) -> tuple[list[dict[str, Any]], list[str]]:
        """The confirmation's guard rails: per object whose deletion has consequences, its
        impact and alternative; and the blockers' reasons (the `protected` list)."""
        guarded, blocked = [], []
        for obj in objs:
            impact = self.deletion_impact(obj)
            if impact is None:
                continue
            blocked += [
                f"{capfirst(impact.noun)} {impact.key}: {c.text}"
                for c in impact.stuck(resolve=False)
            ]
            if impact.losses:
                alternative = self.deletion_alternative(obj) if impact.user_data else ""
                guarded.append({"object": obj, "impact": impact, "alternative": alternative})
        return guarded, blocked

    # --- routes --------------------------------------------------------------------------------

    def get_urls(self) -> list[URLPattern]:
        views: dict[str, tuple[str, View]] = {
            "add": ("add/", self.add_page),
            "change": ("<path:object_id>/change/", self.change_page),
            "delete": ("<path:object_id>/delete/", self.delete_page),
        }
        for view, func in self.object_views().items():
            views[view] = (f"<path:object_id>/{view.replace('_', '-')}/", func)
        prefix = f"{self.opts.app_label}_{self.opts.model_name}_"
        own = [path(route, self._wrap(func), name=prefix + v) for v, (route, func) in views.items()]
        # Django's list, history and "<id>/" redirect stay; ours come first, before that
        # catch-all.
        names = {prefix + view for view in views}
        return [*own, *(p for p in super().get_urls() if p.name not in names)]

    def _wrap(self, view: View) -> View:
        wrapped: Any = self.admin_site.admin_view(view)
        wrapped.model_admin = self  # as Django's own routes: tools find the page's admin
        return wrapped

    def url(self, view: str, obj: Any = None) -> str:
        args = [] if obj is None else [obj.pk]
        name = f"admin:{self.opts.app_label}_{self.opts.model_name}_{view}"
        return reverse(name, args=args, current_app=self.admin_site.name)

    # --- the views -----------------------------------------------------------------------------

    def object_or_404(self, request: HttpRequest, object_id: str, *, change: bool) -> Any:
        """The object, within the selected tenant (get_queryset), if staff may view it, or
        change it when `change`."""
        obj = self.get_object(request, unquote(object_id))
        if obj is None:
            raise Http404(f"No such {self.opts.verbose_name}")
        allowed = (
            self.has_change_permission(request, obj)
            if change
            else self.has_view_or_change_permission(request, obj)
        )
        if not allowed:
            raise PermissionDenied
        return obj

    def add_page(self, request: HttpRequest) -> HttpResponse:
        if not self.has_add_permission(request):
            raise PermissionDenied
        return self._form_page(request, None, editable=True)

    def change_page(self, request: HttpRequest, object_id: str) -> HttpResponse:
        obj = self.object_or_404(request, object_id, change=request.method == "POST")
        return self._form_page(request, obj, editable=self.has_change_permission(request, obj))

    def _form_page(self, request: HttpRequest, obj: Any, *, editable: bool) -> HttpResponse:
        if request.method != "POST":
            form = self.config_form(**self.form_kwargs(request, obj))
        else:
            form = self.config_form(request.POST, request.FILES, **self.form_kwargs(request, obj))
            if form.is_valid():
                if (asked := self.confirmation(request, obj, form)) is not None:
                    return asked
                try:
                    with transaction.atomic():
                        saved = self._save(request, form, obj)
                except ApplicationError as exc:
                    form.refuse(exc)
                else:
                    return self._saved(request, saved, added=obj is None)
        if not editable:
            for field in form.fields.values():
                field.disabled = True
        context = {**self.page_context(request, obj), **self._form_context(form, obj)}
        return self.render_page(request, obj, self.get_form_template(), **context)

    def _save(self, request: HttpRequest, form: ConfigForm, obj: Any) -> Any:
        message = construct_change_message(form, [], obj is None)
        if obj is None:
            obj = self.create(request, form)
            self.log_addition(request, obj, message)
        elif form.changed_data:
            self.update(request, obj, form)
            self.log_change(request, obj, message)
        return obj

    def _saved(self, request: HttpRequest, obj: Any, *, added: bool) -> HttpResponse:
        link = format_html('<a href="{}">{}</a>', self.url("change", obj), obj)
        name = self.opts.verbose_name
        then, url = "", self.after_add_url(obj) if added else None
        if url is None and "_continue" in request.POST:
            then, url = " You may edit it again below.", self.url("change", obj)
        elif url is None and "_addanother" in request.POST:
            then, url = f" You may add another {name} below.", self.url("add")
        elif url is None:
            url = self.url("changelist")
        verb = "added" if added else "changed"
        message = format_html("The {} “{}” was {} successfully.{}", name, link, verb, then)
        self.message_user(request, message, messages.SUCCESS)
        return HttpResponseRedirect(url)

    def _form_context(self, form: ConfigForm, obj: Any) -> dict[str, Any]:
        sections = [
            (title, [self._line(form, name, obj) for name in names])
            for title, names in self.form_sections(obj)
        ]
        return {
            "form": form,
            "sections": sections,
            "errors": bool(form.errors),
            "subtitle": None if obj is None else str(obj),
            "media": self.media + form.media,
        }

    def _line(self, form: ConfigForm, name: str | tuple[str, ...], obj: Any) -> Any:
        if isinstance(name, str):
            return self._row(form, name, obj)
        return Line([self._row(form, one, obj) for one in name])

    def _row(self, form: ConfigForm, name: str, obj: Any) -> Any:
        if name in form.fields:
            return form[name]
        label = capfirst(str(label_for_field(name, self.model, self, return_attr=False)))
        field, _attr, value = lookup_field(name, obj, self)
        if isinstance(field, models.DateTimeField) and value is not None:
            shown = moment_shown(value)  # with its zone, as every moment the dashboard shows
        elif field:
            shown = display_for_field(value, field, "-")
        else:
            shown = display_for_value(value, "-")
        return ReadOnlyRow(name, label, shown)

    def render_page(
        self, request: HttpRequest, obj: Any, template: str | list[str], **context: Any
    ) -> TemplateResponse:
        """A page of this resource in the site's frame: header, navigation, breadcrumbs."""
        add = obj is None
        can_change = add or self.has_change_permission(request, obj)
        verb = "Add" if add else "Change" if can_change else "View"
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": f"{verb} {self.opts.verbose_name}",
            "subtitle": None,
            "original": obj,
            "add": add,
            "can_change": can_change,
            "can_delete": not add and self.has_delete_permission(request, obj),
            "can_add": self.has_add_permission(request),
            "history_url": None if add else self.url("history", obj),
            "change_url": None if add else self.url("change", obj),
            **context,
        }
        return TemplateResponse(request, template, context)

    def done(
        self,
        request: HttpRequest,
        obj: Any,
        history: str,
        message: str,
        level: int = messages.SUCCESS,
    ) -> HttpResponseRedirect:
        """After an action on `obj`: its entry in the object's history, what it did, and back
        to the object's page."""
        self.log_change(request, obj, history)
        self.message_user(request, message, level)
        return HttpResponseRedirect(self.url("change", obj))

    # --- deletion ------------------------------------------------------------------------------

    def delete_page(self, request: HttpRequest, object_id: str) -> HttpResponse:
        obj = self.object_or_404(request, object_id, change=False)
        if not self.has_delete_permission(request, obj):
            raise PermissionDenied
        key_error = ""
        if request.method == "POST":
            try:
                self._remove_all(request, [obj])
            except ApplicationError as exc:
                if exc.code != "unconfirmed":
                    self.message_user(request, exc.message, messages.ERROR)
                    return HttpResponseRedirect(self.url("change", obj))
                key_error = "The key you typed does not match: nothing was deleted."
                obj = self.object_or_404(request, object_id, change=False)  # as stored
            else:
                name = self.opts.verbose_name
                message = format_html("The {} “{}” was deleted successfully.", name, obj)
                self.message_user(request, message, messages.SUCCESS)
                return HttpResponseRedirect(self.url("changelist"))
        deleted, counts = self._deletion([obj])
        guarded, blocked = self._guards([obj])
        protected = [*self.deletion_protected([obj]), *blocked]
        context = {
            **self.admin_site.each_context(request),
            "title": f"Cannot delete {self.opts.verbose_name}" if protected else "Delete",
            "subtitle": None,
            "object_name": str(self.opts.verbose_name),
            "object": obj,
            "deleted_objects": deleted,
            "model_count": counts.items(),
            "protected": protected,
            "guarded": guarded,
            "key_error": key_error,
            "opts": self.opts,
        }
        return TemplateResponse(request, self._admin_templates("delete_confirmation"), context)

    def _remove_all(self, request: HttpRequest, objs: list[Any]) -> None:
        """Every object through the service, in one transaction: all go, or none."""
        with transaction.atomic():
            self.log_deletions(request, objs)
            for obj in objs:
                self.remove(request, obj)

    def _deletion(self, objs: list[Any]) -> tuple[list[Any], dict[str, int]]:
        """What the confirmation lists: the objects and the named rows that go or change with
        them, and the count of each kind (loading no cascade: a service decides what goes)."""
        name = capfirst(self.opts.verbose_name)
        listed: list[Any] = [f"{name}: {obj}" for obj in objs]
        for dependent in dependents(objs):
            for row in dependent.named:
                kind = capfirst(row._meta.verbose_name)
                listed.append(format_html("{} ({}): {}", kind, dependent.effect, admin_link(row)))
        listed += self.deletion_listed(objs)
        counts = {str(self.opts.verbose_name_plural): len(objs), **self.deletion_counts(objs)}
        return listed, counts

    def _admin_templates(self, name: str) -> list[str]:
        """The resource's own template of that name, else the configuration pages' (which say
        the guard rails, apps/core/guards.py), else Django's (as Django's admin looks)."""
        app, model = self.opts.app_label, self.opts.model_name
        return [
            f"admin/{app}/{model}/{name}.html",
            f"admin/{app}/{name}.html",
            f"admin/config/{name}.html",
            f"admin/{name}.html",
        ]

    @admin.action(permissions=["delete"], description="Delete selected %(verbose_name_plural)s")
    def delete_selected(self, request: HttpRequest, queryset: QuerySet) -> HttpResponse | None:
        """The list's bulk delete, with the same confirmation and services as the delete page."""
        objs = list(queryset)
        key_error = ""
        if request.POST.get("post"):
            try:
                self._remove_all(request, objs)
            except ApplicationError as exc:
                if exc.code != "unconfirmed":
                    self.message_user(request, exc.message, messages.ERROR)
                    return None
                key_error = "A key you typed does not match: nothing was deleted."
                objs = list(queryset.all())  # as stored: the rolled back deletes cleared pks
            else:
                items = self.opts.verbose_name if len(objs) == 1 else self.opts.verbose_name_plural
                self.message_user(request, f"Successfully deleted {len(objs)} {items}.")
                return None
        deleted, counts = self._deletion(objs)
        guarded, blocked = self._guards(objs)
        protected = [*self.deletion_protected(objs), *blocked]
        plural = self.opts.verbose_name_plural
        context = {
            **self.admin_site.each_context(request),
            "title": f"Cannot delete {plural}" if protected else "Delete multiple objects",
            "subtitle": None,
            "objects_name": str(self.opts.verbose_name_plural),
            "deletable_objects": [deleted],
            "model_count": counts.items(),
            "protected": protected,
            "guarded": guarded,
            "key_error": key_error,
            "queryset": objs,
            "opts": self.opts,
            "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
            "media": self.media,
        }
        template = self._admin_templates("delete_selected_confirmation")
        return TemplateResponse(request, template, context)
