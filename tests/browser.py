# What the browser tests share (tests/explore_browser.py, tests/explore_games_browser.py): headless
# Debian Chromium driven by selenium through the system chromedriver (nothing is downloaded), and the
# helpers each test uses. tests/it/explore.rs puts this text before each test's own, which sets
# `LABEL` (its name in failures) and then calls `start(shots, window)`.
import os
import sys
import time

try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
except ImportError:
    sys.exit("reference tool missing: selenium (pip install selenium), or run ./test.sh")

driver = None
shots = None
LABEL = "browser"
WAIT_SECONDS = 10.0


def start(folder, window):
    """Headless Chromium at `window` ("WIDTH,HEIGHT"), its screenshots going to `folder` (emptied of
    earlier ones)."""
    global driver, shots
    for path in ["/usr/bin/chromium", "/usr/bin/chromedriver"]:
        if not os.path.exists(path):
            sys.exit(f"reference tool missing: {path} (apt-get install -y chromium chromium-driver), or run ./test.sh")
    shots = folder
    os.makedirs(shots, exist_ok=True)
    for old in os.listdir(shots):
        if old.endswith(".png"):
            os.remove(os.path.join(shots, old))
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for arg in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                f"--window-size={window}", "--hide-scrollbars"]:
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # The driver's path is given: selenium-manager has nothing to look for or download.
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    driver.set_page_load_timeout(20)
    return driver


def fail(message):
    shot("failure")
    sys.exit(f"{LABEL}: {message}")


def shot(name):
    driver.save_screenshot(os.path.join(shots, f"{name}.png"))


def wait(condition, what, timeout=None):
    end = time.time() + (timeout or WAIT_SECONDS)
    while time.time() < end:
        try:
            value = condition()
            if value:
                return value
        except Exception:
            pass
        time.sleep(0.02)
    fail(f"timed out waiting for {what}")


def js(script, *args):
    return driver.execute_script(script, *args)


def check_clean(url):
    """Nothing came from anywhere but the server at `url`, and no script error (a 400 the server was
    asked for is not one)."""
    origin = url.rstrip("/")
    foreign = js("return performance.getEntriesByType('resource').map(e => e.name)")
    foreign = [u for u in foreign if not u.startswith(origin + "/") and not u.startswith("data:")]
    if foreign:
        fail(f"resources from elsewhere: {foreign}")
    errors = [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"
              and "status of 400" not in e["message"]]
    if errors:
        fail(f"console errors: {errors}")
