"""Push notifications: provider clients (APNs, FCM, Expo), credentials, routing, delivery."""
