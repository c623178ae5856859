from django.apps import AppConfig


class ClaimqConfig(AppConfig):
    name = "claimq.contrib.django"
    label = "claimq"
    verbose_name = "claimq"
