"""claimq.contrib.django has no models: this module makes Django send post_migrate for it."""
