def test_event_endpoint_records_total(api_client, metric):
    response = api_client.post("/v1/metrics/words/event", {"user": {"id": "u1"}, "value": 2})
    assert response.status_code == 201, response.content
    assert response.json()["total"] == 2
