from apps.core.bulk import collection_urls
from apps.users import views

urlpatterns = collection_urls("attributes", views.AttributeCollection(), "attributes")
