"""The drill: questions posted to channels, their selection and delivery; the hub features share."""
