"""A GTK 3 application (gtk3-demo's main window) shows up; the console shows
what the compositor renders, byte for byte."""
from slimtest import BACKGROUND, Session, fraction_not, require_programs, run


def test():
    require_programs('gtk3-demo')
    with Session('gtk', size=(1024, 768)) as s:
        s.start_client(['gtk3-demo'])
        s.wait_screen(lambda img: fraction_not(img, BACKGROUND) > 0.2, 'the gtk3-demo window',
                      timeout=30)
        s.settled()
        s.assert_screens_equal()


run(test)
