from django.urls import path
from shop import views

urlpatterns = [
    path("orders/", views.place_order),
    path("orders/<int:order_id>/", views.show_order),
    path("jobs/<int:job_id>/", views.show_job),
    path("tasks/orders/", views.place_order_with_tasks),
    path("tasks/explode/", views.enqueue_explode),
    path("tasks/later/", views.enqueue_later),
    path("tasks/results/<str:result_id>/", views.show_result),
]
